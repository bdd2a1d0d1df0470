/**
 * Performing released runs' actions, a batch at a time (the `gateActions` activity): read the runs
 * whose action is still pending, perform each (bounded concurrency), and record every outcome with
 * If-Match on the row as it was read — so an outcome is recorded exactly once, whoever performs the
 * action and however often (a retried activity, a worker that outlived a lease). The action itself
 * is at least once: an `enqueue` consumer dedupes by `runId`, a `job` submission by its
 * Idempotency-Key.
 *
 * A failure a retry may cure (storage or the jobs service unavailable) leaves the run pending and is
 * reported as `retry`; the orchestration tries again later and, in the end, `giveUp` records the
 * last reason. Any other failure is recorded at once: `code` and `reason` from the AppError, never
 * an internal message.
 */
import { AppError, type AppErrorCode, isAppError } from '../errors';
import { type EffectPorts, runEffect } from '../effects/runner';
import type { Logger } from '../log';
import { mapLimited } from '../mapLimited';
import { actionEffect, type GateAction, type GateActionResult } from './actions';
import type { ActionBatchInput, ActionBatchResult, ReleaseConfirmed, ReleaseFollowUp } from './messages';

export type { ActionBatchInput, ActionBatchResult } from './messages';
import type { ActionOutcome, RunRecord } from './operations';
import { gateActionSchema } from './schemas';
import type { GateStore, StoredRun } from './store';
import { gateTelemetry } from './metrics';
import { noTelemetry, type Telemetry } from '../telemetry/port';

/**
 * Actions performed at once by one activity. A release runs up to 16 batches at once, so an instance
 * has up to 128 actions under way: enough to keep a queue busy (more made Azurite no faster and the
 * gate's other callers slower), few enough to leave the storage account to them.
 */
const actionConcurrency = 8;

export interface ActionDeps {
  readonly store: GateStore;
  /** Makes (or finds) the release a fan-out was started for (the service's `confirmRelease`). */
  readonly confirmRelease: (input: ReleaseFollowUp) => Promise<ReleaseConfirmed>;
  /** What actions run with (a gate run's action needs no Durable client: none, enqueue and job need none). */
  readonly effects: EffectPorts;
  readonly now: () => number;
  readonly logger: Logger;
  /** Where the capability's metrics and spans go (none when absent). */
  readonly telemetry?: Telemetry;
}

export interface ActionInput {
  readonly gate: string;
  readonly generation: number;
  readonly runId: string;
  readonly action: GateAction;
  /** The run's owner: a job its action submits is theirs. */
  readonly owner?: string;
}

/** An action that failed for good: what its run's status says, a problem code and a message fit for callers. */
class ActionFailed extends AppError {}

/**
 * A released run's action, through the effects runner. Failures a retry may cure are thrown as the
 * runner throws them; a failure of the effect itself is an `ActionFailed` with the AppError's code and
 * message when it was one, and nothing of an unexpected error's text (it may name internals).
 */
export async function performAction(effects: EffectPorts, input: ActionInput, telemetry?: Telemetry): Promise<GateActionResult> {
  const run = { gate: input.gate, generation: input.generation, runId: input.runId };
  const effect = actionEffect(input.action, run);
  if (effect === undefined) return { type: 'none' };
  const owner = input.owner === undefined ? {} : { owner: input.owner };
  const outcome = await runEffect(effect, { kind: 'gateRun', ...run, ...owner }, effects, telemetry);
  switch (outcome.outcome) {
    case 'failed': {
      const code: AppErrorCode = outcome.code ?? 'Internal';
      throw new ActionFailed(code, outcome.code === undefined ? `The ${effect.type} action failed` : outcome.reason);
    }
    case 'started':
      return { type: 'job', jobId: outcome.handle };
    case 'succeeded':
      if (outcome.queued === undefined) throw new ActionFailed('Internal', `The ${effect.type} action reported no message`);
      return { type: 'enqueue', ...outcome.queued };
  }
}

export type Attempt = { readonly outcome: ActionOutcome } | { readonly retry: { readonly code: string; readonly reason: string } };

/** One run's action in its own span (a child of the batch's), counted by outcome. */
export async function attempt(deps: ActionDeps, gate: string, generation: number, run: StoredRun): Promise<Attempt> {
  const { metrics, spans } = (deps.telemetry ?? noTelemetry).of(gateTelemetry);
  const type = run.value.actionType === 'job' ? 'job' : 'enqueue';
  return spans.action.run({ attributes: { 'tallyho.gate.name': gate, 'tallyho.gate.action.type': type } }, async () => {
    const tried = await attemptOnce(deps, gate, generation, run);
    const outcome = 'retry' in tried ? 'retried' : tried.outcome.state === 'done' ? 'succeeded' : 'failed';
    metrics.actions.add(1, { 'tallyho.gate.action.type': type, 'tallyho.outcome': outcome });
    return tried;
  });
}

async function attemptOnce(deps: ActionDeps, gate: string, generation: number, run: StoredRun): Promise<Attempt> {
  const at = (): string => new Date(deps.now()).toISOString();
  const failed = (code: string, reason: string): Attempt => ({ outcome: { state: 'failed', at: at(), code, reason } });
  const stored = gateActionSchema.safeParse(JSON.parse(run.actionJson ?? 'null'));
  if (!stored.success) return failed('CorruptState', 'The stored action cannot be read');
  try {
    const { runId, owner } = run.value;
    const input = { gate, generation, runId, action: stored.data, ...(owner === undefined ? {} : { owner }) };
    const result = await performAction(deps.effects, input, deps.telemetry);
    return { outcome: { state: 'done', at: at(), result } };
  } catch (err) {
    if (err instanceof ActionFailed) {
      deps.logger.log('error', 'gates.action.failed', { gate, runId: run.value.runId, error: err });
      return failed(err.code, err.message);
    }
    // The runner throws what a retry may cure (storage, the jobs service unavailable).
    deps.logger.log('warn', 'gates.action.retry', { gate, runId: run.value.runId, error: err });
    return isAppError(err)
      ? { retry: { code: err.code, reason: err.message } }
      : { retry: { code: 'DependencyUnavailable', reason: 'A dependency of the action is unavailable; it is tried again' } };
  }
}

/** The late runs named, as stored, and those not registered (yet). */
async function lateRuns(
  deps: ActionDeps,
  gate: string,
  generation: number,
  runIds: readonly string[],
): Promise<{ runs: StoredRun[]; missing: string[] }> {
  const stored = await mapLimited(runIds, actionConcurrency, (runId) => deps.store.readRun(gate, runId));
  const missing = runIds.filter((_, i) => stored[i] === undefined);
  const mine = (r: RunRecord): boolean => r.late && r.generation === generation && r.actionType !== 'none' && r.outcome === undefined;
  return { runs: stored.filter((s): s is StoredRun => s !== undefined && mine(s.value)), missing };
}

/** A batch in its own span, continuing the release's trace when the batch carries it. */
export function performActionBatch(deps: ActionDeps, input: ActionBatchInput): Promise<ActionBatchResult> {
  const { spans } = (deps.telemetry ?? noTelemetry).of(gateTelemetry);
  const attributes = { 'tallyho.gate.name': input.gate, 'tallyho.gate.generation': String(input.generation) };
  return spans.actions.run({ attributes, ...(input.trace === undefined ? {} : { parent: input.trace }) }, () => actionBatch(deps, input));
}

async function actionBatch(deps: ActionDeps, input: ActionBatchInput): Promise<ActionBatchResult> {
  const { gate, generation } = input;
  const timing = batchTiming(deps.now);
  const gateMetrics = (deps.telemetry ?? noTelemetry).of(gateTelemetry).metrics;
  let selection = input.selection;
  if (input.confirm !== undefined) {
    const confirmed = await deps.confirmRelease(input.confirm);
    if (confirmed.outcome !== 'released') return { done: 0, failed: 0, retry: 0, missing: [] };
    if (selection.kind === 'released') selection = { ...selection, from: confirmed.release.from };
    timing.mark('confirmed');
  }
  let done = 0;
  let failed = 0;
  let retry = 0;
  let lastError: ActionBatchResult['lastError'];
  let missing: string[] = [];
  const handle = async (runs: readonly StoredRun[]): Promise<void> => {
    timing.mark('read');
    const attempts: Attempt[] =
      input.giveUp === undefined
        ? await mapLimited(runs, actionConcurrency, async (run) => {
            const tried = await attempt(deps, gate, generation, run);
            timing.first('sent');
            return tried;
          })
        : runs.map((run) => {
            const type = run.value.actionType === 'job' ? 'job' : 'enqueue';
            gateMetrics.actions.add(1, { 'tallyho.gate.action.type': type, 'tallyho.outcome': 'failed' });
            return {
              outcome: { state: 'failed', at: new Date(deps.now()).toISOString(), ...(input.giveUp as { code: string; reason: string }) },
            };
          });
    const outcomes: { run: StoredRun; outcome: ActionOutcome }[] = [];
    attempts.forEach((a, i) => {
      const run = runs[i] as StoredRun;
      if ('retry' in a) {
        retry++;
        lastError = a.retry;
      } else outcomes.push({ run, outcome: a.outcome });
    });
    timing.mark('performed');
    await deps.store.recordOutcomes(gate, outcomes);
    timing.mark('recorded');
    for (const { outcome } of outcomes)
      if (outcome.state === 'done') done++;
      else failed++;
  };
  if (selection.kind === 'late') {
    const found = await lateRuns(deps, gate, generation, selection.runIds);
    missing = found.missing;
    await handle(found.runs);
  } else {
    for await (const page of deps.store.pendingActions(gate, { shards: selection.shards, from: selection.from, to: generation }))
      await handle(page);
  }
  // One line per batch: when each step ended (epoch ms), so a slow release can be read step by step.
  deps.logger.log('info', 'gates.actions.batch', { gate, generation, done, failed, retry, ...timing.marks() });
  return { done, failed, retry, missing, ...(lastError === undefined ? {} : { lastError }) };
}

/** When a batch started and when each of its steps last ended. */
export function batchTiming(now: () => number): { mark(step: string): void; first(step: string): void; marks(): Record<string, number> } {
  const marks: Record<string, number> = { started: now() };
  return {
    mark: (step) => void (marks[step] = now()),
    first: (step) => void (marks[step] ??= now()),
    marks: () => marks,
  };
}
