/**
 * The gate commands behind the HTTP API. The gate is a row in the `gates` table; every change is a
 * conditional write of that row (with the rows that change with it) and answers as soon as it is
 * written. Work that must follow a change and survive a crash (publishing it, performing released
 * runs' actions, a scheduled release) is a Durable orchestration started before the write, so it
 * either finds the change or finds that it never happened. The commands are given the Durable client
 * of the invocation they serve; a failure of it is the client adapter's (functions/_durable.ts: the
 * backend unavailable is a 503, anything else a 500), not translated again here.
 */
import type { Clock } from '../clock';
import type { DurableClient } from '../durable/client';
import { startSingleton } from '../durable/singleton';
import { AppError, isAppError, validationError } from '../errors';
import type { Logger } from '../log';
import { LostRace, retryLostRaces, type RetryContext } from '../retry';
import { noTelemetry, type Telemetry } from '../telemetry/port';
import type { GateAction } from './actions';
import { auditEntity } from './audit';
import { actionFingerprint } from './fingerprint';
import type { GenerationFollowUp, ReleaseFollowUp, ScheduledReleaseInput } from './messages';
import { gateTelemetry } from './metrics';
import { type ReleaseFanOut, runningLease } from './fanOut';
import { fanOutLeaseSeconds, gateEvents, gateFunctions, gateInstanceIds } from './names';
import type { Actor, CreateOutcome, GateSnapshot, ReleaseHow, ReleaseOutcome, ResetOutcome, RunStart } from './operations';
import { type GateReader, gateNotFound } from './reader';
import type { GateRegistrar } from './registrar';
import type { GateReleases } from './releases';
import type { GateSettings } from './settings';
import type { GateStore } from './store';
import { create, reset, snapshotOf } from './transitions';
import type { GateWatchHub } from './watchHub';

/** A scheduled release at most this far ahead (one year and a day, for "same time next year"). */
const maxScheduleAheadMs = 366 * 24 * 3600 * 1000;

export interface GateCommandsDeps {
  /** The Durable client of the invocation being served: what follows a change is started on it. */
  readonly durable: DurableClient;
  readonly store: GateStore;
  readonly reader: GateReader;
  readonly releases: GateReleases;
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
  /** Resets under way on this app instance, by gate and schedule, shared by every command object the app hands out. */
  readonly resetsInFlight: Map<string, Promise<ResetOutcome>>;
  /**
   * This instance's fan-out of a release's actions, started once the release is written (fanOut.ts);
   * undefined: the release orchestration's batches perform them (at once).
   */
  readonly fanOut: ReleaseFanOut | undefined;
  /** Where the capability's metrics and spans go (none when absent). */
  readonly telemetry?: Telemetry;
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

export class GateCommands {
  private readonly telemetry;

  constructor(private readonly deps: GateCommandsDeps) {
    this.telemetry = (deps.telemetry ?? noTelemetry).of(gateTelemetry);
  }

  private now(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }

  /** Creates the gate closed (generation 1), or confirms an existing one; 409 when its `releaseAt` differs. */
  async create(name: string, releaseAtText: string | undefined, actor: Actor): Promise<CreateOutcome> {
    const releaseAt = checkReleaseAt(releaseAtText, this.deps.clock.now());
    const existing = await this.deps.reader.read(name);
    if (existing !== undefined) return { created: false, gate: this.confirm(existing, releaseAt) };
    const at = this.now();
    const made = create(undefined, { name, at, releaseAt });
    if (made.record === undefined) throw new Error('create made no gate');
    await this.followGeneration(name, 'create', 1, releaseAt, actor);
    const audit = auditEntity({ gate: name, kind: 'create', generation: 1, at, how: 'api', releaseAt, ...actor });
    if (await this.deps.store.insertGate(made.record, audit)) return made.result;
    return { created: false, gate: this.confirm(await this.deps.reader.describe(name), releaseAt) };
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
    const { fanOut } = this.deps;
    return retryLostRaces(this.deps.retry(`gate ${name}`), async () => {
      const stored = await this.deps.store.readGate(name);
      if (stored === undefined) throw gateNotFound(name);
      const gate = stored.value;
      if (options.generation !== undefined && options.generation !== gate.generation) return { outcome: 'superseded' };
      if (gate.state === 'released') return { outcome: 'alreadyReleased', gate: snapshotOf(gate) };
      const maker = { at: options.at ?? this.now(), how, ...actor };
      const { release } = this.deps.releases.made(stored, maker);
      const follow: ReleaseFollowUp = {
        gate: name,
        generation: gate.generation,
        at: maker.at,
        how,
        ...actor,
        announce: this.deps.announces(),
        actions: release.actions,
        from: release.from,
        batchSize: this.deps.settings.notifyBatchSize,
        ...(trace === undefined ? {} : { trace }),
        ...(fanOut === undefined ? {} : { fanOutLeaseSeconds }),
      };
      // This instance fans the actions out itself, under a lease written with the release (fanOut.ts).
      const fansOut = fanOut !== undefined && release.actions > 0;
      if (release.actions > 0 || follow.announce)
        await startSingleton(this.deps.durable, gateFunctions.release, gateInstanceIds.release(name, gate.generation), follow);
      const lease = fansOut ? runningLease(this.deps.clock.now()) : undefined;
      const committed = await this.deps.releases.commitRelease(name, stored, maker, lease);
      if (committed !== undefined) {
        if (fansOut)
          fanOut.start({
            gate: name,
            generation: gate.generation,
            from: committed.release.from,
            ...(trace === undefined ? {} : { trace }),
          });
        return { outcome: 'released', gate: committed.gate };
      }
      // The release orchestration may have made this very release (the caller's who and when) first.
      const now = await this.deps.store.readGate(name);
      const mine = now?.value.release;
      if (now !== undefined && mine?.generation === gate.generation && mine.at === maker.at && mine.by === actor.by) {
        // The orchestration made it and counted it.
        return this.released(snapshotOf(now.value));
      }
      throw new LostRace(`gate ${name} changed`);
    });
  }

  private released(gate: GateSnapshot): ReleaseOutcome {
    this.deps.hub.publish(gate);
    return { outcome: 'released', gate };
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
      if (stored === undefined) throw gateNotFound(name);
      const gate = stored.value;
      from ??= gate.generation;
      const made = reset(gate, { fromGeneration: from, at: this.now(), releaseAt });
      if (made.result.outcome === 'missing') throw gateNotFound(name);
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
      this.deps.registrar.forget(name);
      if (!commit.ok) throw new LostRace(`gate ${name} changed`);
      if (gate.releaseAt !== null && gate.state === 'closed') await this.cancelSchedule(name, gate.generation, gate.releaseAt);
      this.deps.hub.publish(made.result.gate);
      return { outcome: 'reset', gate: made.result.gate, carried: made.result.carried };
    });
  }

  /**
   * Starts a gated run (or finds the one started with this runId and the same action). It returns
   * no Durable management links: run starters hold only a function key. A late joiner's action is
   * started on this request's Durable client.
   */
  async startRun(name: string, runId: string | undefined, action: GateAction, owner: string): Promise<RunStart> {
    // An action the run could not perform once released would only fail the run after the wait.
    await this.deps.checkAction(action);
    const id = runId ?? this.deps.newId();
    // The owner is part of what a repeated start must bring: another caller's start of the same run id is a 409, never this run.
    const fingerprint = `${actionFingerprint(action)}.${owner}`;
    const outcome = await this.deps.registrar.register(name, { runId: id, action, fingerprint, holder: owner, owner }, this.deps.durable);
    const instanceId = gateInstanceIds.run(name, id);
    switch (outcome.kind) {
      case 'missing':
        throw gateNotFound(name);
      case 'full':
        throw new AppError(
          'TooManyRequests',
          `Gate "${name}" generation ${outcome.generation} already has ${outcome.limit} waiting runs (TALLYHO_GATES_MAX_WAITERS); start the run after the release`,
          { retryAfterSeconds: 30 },
        );
      case 'overShare':
        throw new AppError(
          'TooManyRequests',
          `You already have ${outcome.limit} runs waiting on gate "${name}" generation ${outcome.generation}, your share of TALLYHO_GATES_MAX_WAITERS; others keep theirs. Start the run after the release`,
          { retryAfterSeconds: 30, extra: { limit: 'TALLYHO_GATES_MAX_WAITERS', share: outcome.limit } },
        );
      case 'conflict':
        throw new AppError('Conflict', `Run "${id}" of gate "${name}" was started with a different action`);
      case 'existing':
        return { runId: id, instanceId, created: false };
      case 'created':
        return { runId: id, instanceId, created: true };
    }
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
    await startSingleton(this.deps.durable, gateFunctions.generation, gateInstanceIds.generation(name, generation, releaseAt), input);
  }

  private async cancelSchedule(name: string, generation: number, releaseAt: string): Promise<void> {
    try {
      await this.deps.durable.raiseEvent(gateInstanceIds.generation(name, generation, releaseAt), gateEvents.scheduleCancelled, {
        generation,
      });
    } catch (err) {
      // Harmless if lost: the old schedule's release names its generation and is refused as superseded.
      this.deps.logger.log('warn', 'gates.schedule.cancelFailed', { gate: name, generation, error: err });
    }
  }
}
