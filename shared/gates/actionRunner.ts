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
import type { QueueClient } from '@azure/storage-queue';

import { isAppError } from '../errors';
import type { SubmitRequest } from '../jobs/submit';
import type { Logger } from '../log';
import { mapLimited } from '../mapLimited';
import { translateStorageError } from '../storage/errors';
import { type GateAction, type GateActionResult, gateActionSchema, jobActionKey } from './actions';
import type { ReleaseConfirmed, ReleaseFollowUp } from './messages';
import type { ActionOutcome, RunRecord } from './operations';
import type { GateStore, StoredRun } from './store';

/** Actions performed at once by one activity. */
const actionConcurrency = 32;

export interface ActionDeps {
  readonly store: GateStore;
  /** Makes (or finds) the release a fan-out was started for (the service's `confirmRelease`). */
  readonly confirmRelease: (input: ReleaseFollowUp) => Promise<ReleaseConfirmed>;
  readonly actionsQueue: () => Promise<QueueClient>;
  /** The jobs capability's submit use-case (`JobService.submit`, as POST /api/jobs and schedules' job target use it). */
  readonly jobs: () => { submit(request: SubmitRequest, idempotencyKey: string): Promise<{ readonly job: { readonly id: string } }> };
  readonly now: () => number;
  readonly logger: Logger;
}

/** Which runs a batch covers: a release's fan-out (shards of the runs it let go) or named late joiners. */
export type ActionSelection =
  | { readonly kind: 'released'; readonly shards: readonly [number, number]; readonly from: number }
  | { readonly kind: 'late'; readonly runIds: readonly string[] };

export interface ActionBatchInput {
  readonly gate: string;
  /** The generation whose release let the runs go (what an `enqueue` message names). */
  readonly generation: number;
  readonly selection: ActionSelection;
  /**
   * The release to make (or find) first: a fan-out's first batches carry it, so the release is made
   * even if its caller died before writing it, without a step of its own before the actions.
   */
  readonly confirm?: ReleaseFollowUp;
  /** Record every pending run of the selection as failed with this reason instead of trying again. */
  readonly giveUp?: { readonly code: string; readonly reason: string };
}

export interface ActionBatchResult {
  /** Outcomes this batch recorded. */
  readonly done: number;
  readonly failed: number;
  /** Runs left pending after a failure a retry may cure. */
  readonly retry: number;
  /** Late runs named that are not (yet) registered. */
  readonly missing: readonly string[];
  /** The last retryable failure, for the reason recorded if the orchestration gives up. */
  readonly lastError?: { readonly code: string; readonly reason: string };
}

export interface ActionInput {
  readonly gate: string;
  readonly generation: number;
  readonly runId: string;
  readonly action: GateAction;
}

type PerformDeps = Pick<ActionDeps, 'actionsQueue' | 'jobs'>;

async function enqueue(deps: PerformDeps, action: Extract<GateAction, { type: 'enqueue' }>, input: ActionInput): Promise<GateActionResult> {
  const queue = await deps.actionsQueue();
  const message = { gate: input.gate, generation: input.generation, runId: input.runId, payload: action.payload ?? null };
  try {
    // Base64, as the Functions queue trigger expects by default (host.json messageEncoding).
    const sent = await queue.sendMessage(Buffer.from(JSON.stringify(message), 'utf8').toString('base64'));
    return { type: 'enqueue', queue: queue.name, messageId: sent.messageId };
  } catch (err) {
    throw translateStorageError(err, `enqueueing the action of run ${input.runId}`);
  }
}

async function submitJob(deps: PerformDeps, action: Extract<GateAction, { type: 'job' }>, input: ActionInput): Promise<GateActionResult> {
  const { job } = await deps.jobs().submit({ processor: action.processor, items: action.items }, jobActionKey(input.gate, input.runId));
  return { type: 'job', jobId: job.id };
}

/** One case per action type; the exhaustive switch makes a new type a compile error until handled. */
export async function performAction(deps: PerformDeps, input: ActionInput): Promise<GateActionResult> {
  const action = input.action;
  switch (action.type) {
    case 'none':
      return { type: 'none' };
    case 'enqueue':
      return enqueue(deps, action, input);
    case 'job':
      return submitJob(deps, action, input);
  }
}

type Attempt = { readonly outcome: ActionOutcome } | { readonly retry: { readonly code: string; readonly reason: string } };

async function attempt(deps: ActionDeps, gate: string, generation: number, run: StoredRun): Promise<Attempt> {
  const at = (): string => new Date(deps.now()).toISOString();
  try {
    const action = gateActionSchema.parse(JSON.parse(run.actionJson ?? 'null'));
    const result = await performAction(deps, { gate, generation, runId: run.value.runId, action });
    return { outcome: { state: 'done', at: at(), result } };
  } catch (err) {
    if (isAppError(err) && err.retryable) {
      deps.logger.log('warn', 'gates.action.retry', { gate, runId: run.value.runId, error: err });
      return { retry: { code: err.code, reason: err.message } };
    }
    deps.logger.log('error', 'gates.action.failed', { gate, runId: run.value.runId, error: err });
    const outcome: ActionOutcome = isAppError(err)
      ? { state: 'failed', at: at(), code: err.code, reason: err.message }
      : { state: 'failed', at: at(), code: 'Internal', reason: 'The action failed unexpectedly' };
    return { outcome };
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

export async function performActionBatch(deps: ActionDeps, input: ActionBatchInput): Promise<ActionBatchResult> {
  const { gate, generation } = input;
  let selection = input.selection;
  if (input.confirm !== undefined) {
    const confirmed = await deps.confirmRelease(input.confirm);
    if (confirmed.outcome !== 'released') return { done: 0, failed: 0, retry: 0, missing: [] };
    if (selection.kind === 'released') selection = { ...selection, from: confirmed.release.from };
  }
  let done = 0;
  let failed = 0;
  let retry = 0;
  let lastError: ActionBatchResult['lastError'];
  let missing: string[] = [];
  const handle = async (runs: readonly StoredRun[]): Promise<void> => {
    const attempts: Attempt[] =
      input.giveUp === undefined
        ? await mapLimited(runs, actionConcurrency, (run) => attempt(deps, gate, generation, run))
        : runs.map(() => ({
            outcome: { state: 'failed', at: new Date(deps.now()).toISOString(), ...(input.giveUp as { code: string; reason: string }) },
          }));
    const outcomes: { run: StoredRun; outcome: ActionOutcome }[] = [];
    attempts.forEach((a, i) => {
      const run = runs[i] as StoredRun;
      if ('retry' in a) {
        retry++;
        lastError = a.retry;
      } else outcomes.push({ run, outcome: a.outcome });
    });
    await deps.store.recordOutcomes(gate, outcomes);
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
  return { done, failed, retry, missing, ...(lastError === undefined ? {} : { lastError }) };
}
