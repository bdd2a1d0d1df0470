/**
 * The gates use cases behind the HTTP API. The gate is a row in the `gates` table; every change is a
 * conditional write of that row (with the rows that change with it) and answers as soon as it is
 * written. Work that must follow a change and survive a crash (publishing it, performing released
 * runs' actions, a scheduled release) is a Durable orchestration started before the write, so it
 * either finds the change or finds that it never happened.
 */
import { createHash } from 'node:crypto';

import type { Clock } from '../clock';
import type { DurableClient } from '../durable/client';
import { startSingleton } from '../durable/singleton';
import { AppError, isAppError, validationError } from '../errors';
import type { Logger } from '../log';
import { LostRace, retryLostRaces, type RetryContext } from '../retry';
import type { Page, PageRequest } from '../storage/list';
import type { GateAction, GateActionResult } from './actions';
import { actionFingerprint } from './fingerprint';
import { auditEntity } from './audit';
import type { GenerationFollowUp, LateActionsInput, ReleaseConfirmed, ReleaseFollowUp, ScheduledReleaseInput } from './messages';
import { gateEvents, gateFunctions, gateInstanceIds } from './names';
import type { GateRecord, GateSnapshot, ReleaseHow, ReleaseInfo, ReleaseRecord, RunState } from './operations';
import type { GateRegistrar } from './registrar';
import { releaseEntity } from './rows';
import type { GateSettings } from './settings';
import type { GateStore } from './store';
import { create, earlierReleaseNeeded, release, reset, runStateOf, snapshotOf } from './transitions';
import type { GateWatchHub } from './watchHub';
import { gateTelemetry } from './metrics';
import { noTelemetry, type Telemetry } from '../telemetry/port';

/** A scheduled release at most this far ahead (one year and a day, for "same time next year"). */
const maxScheduleAheadMs = 366 * 24 * 3600 * 1000;

export interface GateServiceDeps {
  /**
   * The Durable client of the invocation being served, asked for only to start what follows a change
   * (reads never need one).
   */
  readonly durable: () => DurableClient;
  readonly store: GateStore;
  /** This app instance's one registrar (its group commits span every request). */
  readonly registrar: GateRegistrar;
  readonly hub: GateWatchHub;
  readonly settings: GateSettings;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly retry: (subject: string) => RetryContext;
  readonly newId: () => string;
  /**
   * Checks a run's action before the run starts (the effects' validation: a job action gets the jobs
   * API's checks); its 400/413 names the field inside the run body (`body.action.items.3`).
   */
  readonly checkAction: (action: GateAction) => Promise<void>;
  /** Whether changes are published on the Service Bus topic (each then starts an orchestration that does it). */
  readonly announces: () => boolean;
  /** Resets under way on this app instance, by gate and schedule, shared by every service the app hands out. */
  readonly resetsInFlight: Map<string, Promise<ResetOutcome>>;
  /** Where the capability's metrics and spans go (none when absent). */
  readonly telemetry?: Telemetry;
}

export interface Actor {
  readonly by: string;
  readonly note?: string;
}

export type CreateOutcome = { readonly created: boolean; readonly gate: GateSnapshot };
export type ReleaseOutcome = { readonly outcome: 'released' | 'alreadyReleased'; readonly gate: GateSnapshot };
export type ResetOutcome = { readonly outcome: 'reset' | 'alreadyReset'; readonly gate: GateSnapshot; readonly carried: number };

export interface RunStart {
  readonly runId: string;
  readonly instanceId: string;
  readonly created: boolean;
}

/** A gated run as its status route answers. */
export interface RunView {
  readonly runId: string;
  readonly gate: string;
  readonly instanceId: string;
  readonly state: RunState['state'];
  /** Waiting: the generation it waits on; otherwise the generation whose release let it go. */
  readonly generation: number;
  readonly late: boolean;
  readonly registeredAt: string;
  readonly proceededAt: string | null;
  readonly release: ReleaseInfo | null;
  /** What the action did, once it did (`{type: 'none'}` for a run without one, once it proceeded). */
  readonly action: GateActionResult | null;
  readonly actionAt: string | null;
  /** Only for a failed run: what failed it, as an AppError code and its message. */
  readonly failure?: { readonly code: string; readonly reason: string };
}

function notFound(name: string): AppError {
  return new AppError('NotFound', `No gate named "${name}" (create it with PUT /api/gates/${name})`);
}

/** Checks a `releaseAt`: in the future and at most a year ahead. Returns it normalised (UTC, ms). */
export function checkReleaseAt(releaseAt: string | undefined, now: number): string | null {
  if (releaseAt === undefined) return null;
  const at = Date.parse(releaseAt);
  const issue = (message: string): AppError => validationError('The releaseAt is not acceptable', [{ path: 'body.releaseAt', message }]);
  if (!Number.isFinite(at)) throw issue('Not a time');
  if (at <= now) throw issue(`Must be in the future (now is ${new Date(now).toISOString()})`);
  if (at - now > maxScheduleAheadMs) throw issue('Must be at most 366 days ahead');
  return new Date(at).toISOString();
}

/** The gate as it was right after releasing `release` (for announcing a release the gate has since moved past). */
function releasedView(gate: GateRecord, release: ReleaseRecord): GateSnapshot {
  const current = snapshotOf(gate);
  if (gate.generation === release.generation) return current;
  const { from: _from, ...info } = release;
  return { ...current, generation: release.generation, state: 'released', releaseAt: null, release: info };
}

/**
 * Starts the orchestration unless an instance with the id exists already (a concurrent call, or a
 * retry, started it).
 */
async function startOnce(durable: DurableClient, orchestration: string, instanceId: string, input: unknown): Promise<void> {
  try {
    await startSingleton(durable, orchestration, instanceId, input);
  } catch (err) {
    throw new AppError('DependencyUnavailable', 'The Durable task hub is unavailable; try again shortly', {
      cause: err,
      retryAfterSeconds: 2,
      internal: `Starting ${orchestration} ${instanceId} failed: ${err instanceof Error ? err.message : String(err)}`,
    });
  }
}

/**
 * What the registrar calls before it commits late joiners with an action: the orchestration that
 * performs their actions, one per set of runs (a registration that retries starts the same one again).
 */
export function lateActionsStarter(durable: () => DurableClient) {
  return async (gate: string, generation: number, runIds: readonly string[]): Promise<void> => {
    const input: LateActionsInput = { gate, generation, runIds };
    const batch = createHash('sha256')
      .update([...runIds].sort().join('\n'))
      .digest('base64url')
      .slice(0, 22);
    await startOnce(durable(), gateFunctions.lateActions, gateInstanceIds.late(gate, generation, batch), input);
  };
}

export class GateService {
  private readonly registrar: GateRegistrar;
  private readonly telemetry;

  constructor(private readonly deps: GateServiceDeps) {
    this.registrar = deps.registrar;
    this.telemetry = (deps.telemetry ?? noTelemetry).of(gateTelemetry);
  }

  /** A release made: counted with the runs it let go (all at once, none of them costs work of its own). */
  private recordRelease(gate: GateSnapshot, how: ReleaseHow): void {
    const { metrics } = this.telemetry;
    const name = { 'tallyho.gate.name': gate.name };
    metrics.releases.add(1, { ...name, 'tallyho.gate.release.how': how });
    metrics.released.record(gate.waiters.registered, name);
  }

  private now(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }

  /** The gate's state; undefined when the gate does not exist. */
  async read(name: string): Promise<GateSnapshot | undefined> {
    const stored = await this.deps.store.readGate(name);
    if (stored === undefined) return undefined;
    const snapshot = snapshotOf(stored.value);
    this.telemetry.metrics.waiting.record(snapshot.waiters.waiting, { 'tallyho.gate.name': name });
    return snapshot;
  }

  /** A page of gates as they are now, in name order. */
  async list(page: PageRequest): Promise<Page<GateSnapshot>> {
    const listed = await this.deps.store.listGates(page);
    return { ...listed, items: listed.items.map(snapshotOf) };
  }

  async describe(name: string): Promise<GateSnapshot> {
    const gate = await this.read(name);
    if (gate === undefined) throw notFound(name);
    return gate;
  }

  /** Creates the gate closed (generation 1), or confirms an existing one; 409 when its `releaseAt` differs. */
  async create(name: string, releaseAtText: string | undefined, actor: Actor): Promise<CreateOutcome> {
    const releaseAt = checkReleaseAt(releaseAtText, this.deps.clock.now());
    const existing = await this.read(name);
    if (existing !== undefined) return { created: false, gate: this.confirm(existing, releaseAt) };
    const at = this.now();
    const made = create(undefined, { name, at, releaseAt });
    if (made.record === undefined) throw new Error('create made no gate');
    await this.followGeneration(name, 'create', 1, releaseAt, actor);
    const audit = auditEntity({ gate: name, kind: 'create', generation: 1, at, how: 'api', releaseAt, ...actor });
    if (await this.deps.store.insertGate(made.record, audit)) return made.result;
    return { created: false, gate: this.confirm(await this.describe(name), releaseAt) };
  }

  /**
   * Releases the current generation (or, with `options.generation`, that one only); a released gate
   * answers its release (who and when) again. Answers once the release is written. Its span's trace
   * context goes with the release orchestration, so the released runs' actions join its trace.
   */
  release(
    name: string,
    actor: Actor,
    options: { generation?: number; how?: ReleaseHow; at?: string } = {},
  ): Promise<ReleaseOutcome | { outcome: 'superseded' }> {
    return this.telemetry.spans.release.run({ attributes: { 'tallyho.gate.name': name } }, (span) =>
      this.releaseIn(name, actor, options, span.traceparent()),
    );
  }

  private async releaseIn(
    name: string,
    actor: Actor,
    options: { generation?: number; how?: ReleaseHow; at?: string },
    trace: string | undefined,
  ): Promise<ReleaseOutcome | { outcome: 'superseded' }> {
    const how = options.how ?? 'api';
    return retryLostRaces(this.deps.retry(`gate ${name}`), async () => {
      const stored = await this.deps.store.readGate(name);
      if (stored === undefined) throw notFound(name);
      const gate = stored.value;
      if (options.generation !== undefined && options.generation !== gate.generation) return { outcome: 'superseded' };
      if (gate.state === 'released') return { outcome: 'alreadyReleased', gate: snapshotOf(gate) };
      const at = options.at ?? this.now();
      const made = release(gate, { generation: gate.generation, at, how, ...actor });
      if (made.result.outcome !== 'released' || made.record === undefined) throw new Error(`release answered ${made.result.outcome}`);
      const follow: ReleaseFollowUp = {
        gate: name,
        generation: gate.generation,
        at,
        how,
        ...actor,
        announce: this.deps.announces(),
        actions: made.result.release.actions,
        from: made.result.release.from,
        batchSize: this.deps.settings.notifyBatchSize,
        ...(trace === undefined ? {} : { trace }),
      };
      if (made.result.release.actions > 0 || follow.announce)
        await this.startOnce(gateFunctions.release, gateInstanceIds.release(name, gate.generation), follow);
      const rows = [
        releaseEntity(name, made.result.release),
        auditEntity({ gate: name, kind: 'release', generation: gate.generation, at, how, ...actor }),
      ];
      const commit = await this.deps.store.commit(made.record, stored.etag, rows);
      if (!commit.ok) {
        this.registrar.forget(name);
        // The release orchestration may have made this very release (the caller's who and when) first.
        const now = await this.deps.store.readGate(name);
        const mine = now?.value.release;
        if (now !== undefined && mine?.generation === gate.generation && mine.at === at && mine.by === actor.by) {
          // The orchestration made it and counted it.
          return this.released(snapshotOf(now.value));
        }
        throw new LostRace(`gate ${name} changed`);
      }
      this.registrar.forget(name);
      this.recordRelease(made.result.gate, how);
      return this.released(made.result.gate);
    });
  }

  private released(gate: GateSnapshot): ReleaseOutcome {
    this.deps.hub.publish(gate);
    return { outcome: 'released', gate };
  }

  /**
   * The release orchestration's first step: makes the release it was started for, unless the caller
   * made it already (or the gate moved past that generation without it).
   */
  async confirmRelease(input: ReleaseFollowUp): Promise<ReleaseConfirmed> {
    return retryLostRaces(this.deps.retry(`gate ${input.gate}`), async () => {
      const stored = await this.deps.store.readGate(input.gate);
      if (stored === undefined) return { outcome: 'missing' };
      const gate = stored.value;
      if (gate.generation === input.generation && gate.state === 'closed') {
        const { gate: name, generation, at, by, how, note } = input;
        const made = release(gate, { generation, at, by, how, ...(note === undefined ? {} : { note }) });
        if (made.result.outcome !== 'released' || made.record === undefined) throw new Error(`release answered ${made.result.outcome}`);
        const rows = [
          releaseEntity(name, made.result.release),
          auditEntity({ gate: name, kind: 'release', generation, at, by, how, ...(note === undefined ? {} : { note }) }),
        ];
        const commit = await this.deps.store.commit(made.record, stored.etag, rows);
        if (!commit.ok) throw new LostRace(`gate ${name} changed`);
        this.registrar.forget(name);
        this.deps.hub.publish(made.result.gate);
        this.recordRelease(made.result.gate, how);
        return { outcome: 'released', gate: made.result.gate, release: made.result.release, actions: made.result.release.actions };
      }
      const made = await this.deps.store.releaseFrom(input.gate, input.generation);
      if (made?.generation !== input.generation) return { outcome: 'superseded' };
      return { outcome: 'released', gate: releasedView(gate, made), release: made, actions: made.actions };
    });
  }

  /** Closes the gate again with the next generation; runs still waiting move into it. Cancels the old schedule. */
  async reset(name: string, releaseAtText: string | undefined, actor: Actor): Promise<ResetOutcome> {
    const releaseAt = checkReleaseAt(releaseAtText, this.deps.clock.now());
    // Concurrent resets on this instance join the one under way (across instances, the If-Match does it).
    const key = `${name}\n${releaseAt ?? ''}`;
    const underWay = this.deps.resetsInFlight.get(key);
    if (underWay !== undefined) {
      const joined = await underWay;
      return { outcome: 'alreadyReset', gate: joined.gate, carried: 0 };
    }
    const resetting = this.resetOnce(name, releaseAt, actor);
    this.deps.resetsInFlight.set(key, resetting);
    try {
      return await resetting;
    } finally {
      this.deps.resetsInFlight.delete(key);
    }
  }

  private resetOnce(name: string, releaseAt: string | null, actor: Actor): Promise<ResetOutcome> {
    let from: number | undefined;
    return retryLostRaces(this.deps.retry(`gate ${name}`), async () => {
      const stored = await this.deps.store.readGate(name);
      if (stored === undefined) throw notFound(name);
      const gate = stored.value;
      from ??= gate.generation;
      const made = reset(gate, { fromGeneration: from, at: this.now(), releaseAt });
      if (made.result.outcome === 'missing') throw notFound(name);
      if (made.result.outcome === 'alreadyReset') return { outcome: 'alreadyReset', gate: made.result.gate, carried: 0 };
      if (made.record === undefined) throw new Error('reset made no gate');
      const generation = gate.generation + 1;
      await this.followGeneration(name, 'reset', generation, releaseAt, actor);
      const audit = auditEntity({
        gate: name,
        kind: 'reset',
        generation,
        at: made.record.generationStartedAt,
        how: 'api',
        releaseAt,
        ...actor,
      });
      const commit = await this.deps.store.commit(made.record, stored.etag, [audit]);
      this.registrar.forget(name);
      if (!commit.ok) throw new LostRace(`gate ${name} changed`);
      if (gate.releaseAt !== null && gate.state === 'closed') await this.cancelSchedule(name, gate.generation, gate.releaseAt);
      this.deps.hub.publish(made.result.gate);
      return { outcome: 'reset', gate: made.result.gate, carried: made.result.carried };
    });
  }

  /**
   * Starts a gated run (or finds the one started with this runId and the same action). It returns
   * no Durable management links: run starters hold only a function key.
   */
  async startRun(name: string, runId: string | undefined, action: GateAction): Promise<RunStart> {
    // An action the run could not perform once released would only fail the run after the wait.
    await this.deps.checkAction(action);
    const id = runId ?? this.deps.newId();
    const outcome = await this.registrar.register(name, { runId: id, action, fingerprint: actionFingerprint(action) });
    const instanceId = gateInstanceIds.run(name, id);
    switch (outcome.kind) {
      case 'missing':
        throw notFound(name);
      case 'full':
        throw new AppError(
          'TooManyRequests',
          `Gate "${name}" generation ${outcome.generation} already has ${outcome.limit} waiting runs (TALLYHO_GATES_MAX_WAITERS); start the run after the release`,
          { retryAfterSeconds: 30 },
        );
      case 'conflict':
        throw new AppError('Conflict', `Run "${id}" of gate "${name}" was started with a different action`);
      case 'existing':
        return { runId: id, instanceId, created: false };
      case 'created':
        return { runId: id, instanceId, created: true };
    }
  }

  /** A gated run's state; 404 when there is no such run. */
  async runStatus(name: string, runId: string): Promise<RunView> {
    const [run, first] = await Promise.all([this.deps.store.readRun(name, runId), this.deps.store.readGate(name)]);
    if (run === undefined || first === undefined) throw new AppError('NotFound', `No run "${runId}" of gate "${name}"`);
    // Read together, the gate may be older than the run's outcome: an outcome comes after a release.
    const gate =
      run.value.outcome !== undefined && first.value.state === 'closed' ? ((await this.deps.store.readGate(name)) ?? first) : first;
    const needed = earlierReleaseNeeded(run.value, gate.value);
    const earlier = needed === undefined ? undefined : await this.deps.store.releaseFrom(name, needed);
    if (needed !== undefined && earlier === undefined)
      throw new AppError('CorruptState', `The release that let run "${runId}" of gate "${name}" go is missing`);
    const state = runStateOf(run.value, gate.value, earlier);
    const { outcome } = run.value;
    const letGo = state.state !== 'waiting';
    const action: GateActionResult | null =
      outcome?.state === 'done' ? outcome.result : letGo && run.value.actionType === 'none' ? { type: 'none' } : null;
    return {
      runId,
      gate: name,
      instanceId: gateInstanceIds.run(name, runId),
      state: state.state,
      generation: state.generation,
      late: run.value.late,
      registeredAt: run.value.registeredAt,
      proceededAt: letGo ? state.proceededAt : null,
      release: letGo ? state.release : null,
      action,
      actionAt: outcome?.at ?? null,
      ...(outcome?.state === 'failed' ? { failure: { code: outcome.code, reason: outcome.reason } } : {}),
    };
  }

  /** A generation's scheduled release (the orchestration's timer fired at `at`): the API's release of that generation. */
  async scheduledRelease(input: ScheduledReleaseInput): Promise<string> {
    const { gate: name, generation, by, at } = input;
    try {
      return (await this.release(name, { by }, { generation, how: 'schedule', at })).outcome;
    } catch (err) {
      if (isAppError(err) && err.code === 'NotFound') return 'missing';
      throw err;
    }
  }

  private confirm(gate: GateSnapshot, releaseAt: string | null): GateSnapshot {
    if (releaseAt !== null && gate.releaseAt !== releaseAt) {
      throw new AppError(
        'Conflict',
        `Gate "${gate.name}" exists with releaseAt ${gate.releaseAt ?? 'unset'}; reset it with a releaseAt to schedule generation ${gate.generation + 1}`,
      );
    }
    return gate;
  }

  /** Starts what follows opening a generation, when anything does: a schedule, an announcement. */
  private async followGeneration(
    name: string,
    kind: 'create' | 'reset',
    generation: number,
    releaseAt: string | null,
    actor: Actor,
  ): Promise<void> {
    const announce = this.deps.announces();
    if (releaseAt === null && !announce) return;
    const input: GenerationFollowUp = {
      gate: name,
      kind,
      generation,
      releaseAt,
      announce,
      batchSize: this.deps.settings.notifyBatchSize,
      ...actor,
    };
    await this.startOnce(gateFunctions.generation, gateInstanceIds.generation(name, generation, releaseAt), input);
  }

  private async cancelSchedule(name: string, generation: number, releaseAt: string): Promise<void> {
    try {
      await this.deps
        .durable()
        .raiseEvent(gateInstanceIds.generation(name, generation, releaseAt), gateEvents.scheduleCancelled, { generation });
    } catch (err) {
      // Harmless if lost: the old schedule's release names its generation and is refused as superseded.
      this.deps.logger.log('warn', 'gates.schedule.cancelFailed', { gate: name, generation, error: err });
    }
  }

  private startOnce(orchestration: string, instanceId: string, input: unknown): Promise<void> {
    return startOnce(this.deps.durable(), orchestration, instanceId, input);
  }
}
