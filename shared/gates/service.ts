/**
 * The gates use cases behind the HTTP API. Reads go to the gate entity's state; every change goes
 * through an orchestration with a deterministic id (so concurrent calls collapse), and the call waits,
 * bounded, for the orchestration to report what the entity decided.
 */
import type { Clock } from '../clock';
import { type DurableClient, type InstanceStatus, isFinished, type ManagementLinks } from '../durable/client';
import { startSingleton } from '../durable/singleton';
import { AppError, validationError } from '../errors';
import type { Logger } from '../log';
import { type GateAction } from './actions';
import type { GenerationInput, GenerationStatus, ReleaseInput, ReleaseStatus, RunInput } from './messages';
import { gateEvents, gateFunctions, gateInstanceIds } from './names';
import { type GateSnapshot, gateRecordSchema } from './operations';
import { snapshotOf } from './transitions';
import type { GateSettings } from './settings';
import type { GateWatchHub } from './watchHub';

/** A scheduled release at most this far ahead (one year and a day, for "same time next year"). */
const maxScheduleAheadMs = 366 * 24 * 3600 * 1000;

export interface GateServiceDeps {
  /** The Durable client of the invocation being served (or the app's source of one, for the watchers' reads). */
  readonly durable: () => DurableClient;
  readonly hub: GateWatchHub;
  readonly settings: GateSettings;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly newId: () => string;
  /**
   * Checks a run's action before the run starts (the effects' validation: a job action gets the jobs
   * API's checks); its 400/413 names the field inside the run body (`body.action.items.3`).
   */
  readonly checkAction: (action: GateAction) => Promise<void>;
  /**
   * Gates this app instance has seen exist, shared by every service the app hands out. Gates are
   * never deleted, so a run start need not read the gate's state (which holds the waiting list)
   * again once it has seen the gate.
   */
  readonly known: Set<string>;
}

export interface Actor {
  readonly by: string;
  readonly note?: string;
}

/** Still under way after `commandWaitMs`: the orchestration doing it. */
export interface Pending {
  readonly pending: true;
  readonly instanceId: string;
}

export type CreateOutcome = { readonly pending?: false; readonly created: boolean; readonly gate: GateSnapshot } | Pending;
export type ReleaseOutcome =
  { readonly pending?: false; readonly outcome: 'released' | 'alreadyReleased'; readonly gate: GateSnapshot } | Pending;
export type ResetOutcome =
  { readonly pending?: false; readonly outcome: 'reset' | 'alreadyReset'; readonly gate: GateSnapshot; readonly carried: number } | Pending;

export interface RunStart {
  readonly runId: string;
  readonly instanceId: string;
  readonly created: boolean;
}

/** A gated run as its orchestration reports it, without any Durable management URL. */
export interface RunState {
  readonly runId: string;
  readonly instanceId: string;
  readonly runtimeStatus: string;
  readonly customStatus: unknown;
  readonly output: unknown;
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

function customStatusOf<T>(status: InstanceStatus | undefined, pick: (custom: T) => boolean): T | undefined {
  const custom = status?.customStatus as T | null | undefined;
  return custom !== null && custom !== undefined && typeof custom === 'object' && pick(custom) ? custom : undefined;
}

export class GateService {
  private readonly known: Set<string>;

  constructor(private readonly deps: GateServiceDeps) {
    this.known = deps.known;
  }

  /** The gate's state, parsed; undefined when the gate does not exist. */
  async read(name: string): Promise<GateSnapshot | undefined> {
    const stored = await this.deps.durable().readState<unknown>({ name: gateFunctions.entity, key: name });
    if (stored === undefined || stored === null) return undefined;
    const parsed = gateRecordSchema.safeParse(stored);
    if (!parsed.success) throw new AppError('CorruptState', `The stored state of gate "${name}" cannot be read: ${parsed.error.message}`);
    return snapshotOf(parsed.data);
  }

  async describe(name: string): Promise<GateSnapshot> {
    const gate = await this.read(name);
    if (gate === undefined) throw notFound(name);
    this.known.add(name);
    return gate;
  }

  /** Creates the gate closed (generation 1), or confirms an existing one; 409 when its `releaseAt` differs. */
  async create(name: string, releaseAtText: string | undefined, actor: Actor): Promise<CreateOutcome> {
    const releaseAt = checkReleaseAt(releaseAtText, this.deps.clock.now());
    const existing = await this.read(name);
    if (existing !== undefined) return { created: false, gate: this.confirm(existing, releaseAt) };
    const instanceId = gateInstanceIds.generation(name, 1);
    const input: GenerationInput = { gate: name, kind: 'create', releaseAt, notifyBatchSize: this.deps.settings.notifyBatchSize, ...actor };
    await this.startOnce(gateFunctions.generation, instanceId, input);
    const status = await this.awaitStatus<GenerationStatus>(instanceId, (s) => s.opened !== undefined);
    if (status === undefined) return this.pending(instanceId);
    const { opened } = status;
    if (opened.gate === undefined) throw new AppError('Internal', `Creating gate "${name}" reported ${opened.outcome}`);
    return opened.outcome === 'created'
      ? { created: true, gate: opened.gate }
      : { created: false, gate: this.confirm(opened.gate, releaseAt) };
  }

  /** Releases the current generation; a released gate answers its release (who and when) again. */
  async release(name: string, actor: Actor): Promise<ReleaseOutcome> {
    // A reset between our read and the release makes the entity answer `superseded`: read again.
    for (let attempt = 0; attempt < 3; attempt++) {
      const gate = await this.describe(name);
      if (gate.state === 'released') return { outcome: 'alreadyReleased', gate };
      const instanceId = gateInstanceIds.release(name, gate.generation);
      const input: ReleaseInput = {
        gate: name,
        generation: gate.generation,
        how: 'api',
        notifyBatchSize: this.deps.settings.notifyBatchSize,
        ...actor,
      };
      await this.startOnce(gateFunctions.release, instanceId, input);
      const status = await this.awaitStatus<ReleaseStatus>(instanceId, (s) => typeof s.outcome === 'string');
      if (status === undefined) return this.pending(instanceId);
      switch (status.outcome) {
        case 'released':
        case 'alreadyReleased':
          this.deps.hub.publish(status.gate);
          return { outcome: status.outcome, gate: status.gate };
        case 'missing':
          throw notFound(name);
        case 'superseded':
          continue;
      }
    }
    throw new AppError('ConcurrencyExhausted', `Gate "${name}" kept being reset while releasing it`, { retryAfterSeconds: 1 });
  }

  /** Closes the gate again with the next generation; runs still waiting move into it. Cancels the old schedule. */
  async reset(name: string, releaseAtText: string | undefined, actor: Actor): Promise<ResetOutcome> {
    const releaseAt = checkReleaseAt(releaseAtText, this.deps.clock.now());
    const gate = await this.describe(name);
    const instanceId = gateInstanceIds.generation(name, gate.generation + 1);
    const input: GenerationInput = {
      gate: name,
      kind: 'reset',
      fromGeneration: gate.generation,
      releaseAt,
      notifyBatchSize: this.deps.settings.notifyBatchSize,
      ...actor,
    };
    await this.startOnce(gateFunctions.generation, instanceId, input);
    const status = await this.awaitStatus<GenerationStatus>(instanceId, (s) => s.opened !== undefined);
    if (status === undefined) return this.pending(instanceId);
    const { opened } = status;
    if (opened.outcome === 'missing') throw notFound(name);
    if (opened.gate === undefined || (opened.outcome !== 'reset' && opened.outcome !== 'alreadyReset')) {
      throw new AppError('Internal', `Resetting gate "${name}" reported ${opened.outcome}`);
    }
    if (opened.outcome === 'reset' && gate.releaseAt !== null && gate.state === 'closed') {
      await this.cancelSchedule(name, gate.generation);
    }
    this.deps.hub.publish(opened.gate);
    return { outcome: opened.outcome, gate: opened.gate, carried: opened.carried ?? 0 };
  }

  /**
   * Starts a gated run (or finds the one started with this runId). It returns no Durable management
   * links: they carry the Durable extension's system key, and run starters hold only a function key.
   */
  async startRun(name: string, runId: string | undefined, action: GateAction): Promise<RunStart> {
    // An action the run could not perform once released would only fail the run after the wait.
    await this.deps.checkAction(action);
    if (!this.known.has(name)) await this.describe(name);
    const id = runId ?? this.deps.newId();
    const instanceId = gateInstanceIds.run(name, id);
    const durable = this.deps.durable();
    // A caller's runId may name a run that exists (even finished: starting it again would restart it).
    if (runId !== undefined && (await durable.getStatus(instanceId)) !== undefined) return { runId: id, instanceId, created: false };
    const input: RunInput = { gate: name, runId: id, action, maxWaiters: this.deps.settings.maxWaiters };
    const created = await this.startOnce(gateFunctions.run, instanceId, input);
    return { runId: id, instanceId, created };
  }

  /** A gated run's status (phase while it waits, its output once done); 404 when there is no such run. */
  async runStatus(name: string, runId: string): Promise<RunState> {
    const instanceId = gateInstanceIds.run(name, runId);
    const status = await this.deps.durable().getStatus(instanceId);
    if (status === undefined) throw new AppError('NotFound', `No run "${runId}" of gate "${name}"`);
    return { runId, instanceId, runtimeStatus: status.runtimeStatus, customStatus: status.customStatus, output: status.output };
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

  private async cancelSchedule(name: string, generation: number): Promise<void> {
    try {
      await this.deps.durable().raiseEvent(gateInstanceIds.generation(name, generation), gateEvents.scheduleCancelled, { generation });
    } catch (err) {
      // Harmless if lost: the old schedule's release names its generation and is refused as superseded.
      this.deps.logger.log('warn', 'gates.schedule.cancelFailed', { gate: name, generation, error: err });
    }
  }

  /** Starts the orchestration unless a concurrent call did (then we follow that one); true when this call started it. */
  private async startOnce(orchestration: string, instanceId: string, input: unknown): Promise<boolean> {
    return (await startSingleton(this.deps.durable(), orchestration, instanceId, input)) === 'started';
  }

  /** Polls the instance until its custom status satisfies `pick`, it ends, or commandWaitMs passes. */
  private async awaitStatus<T>(instanceId: string, pick: (custom: T) => boolean): Promise<T | undefined> {
    const { clock, settings } = this.deps;
    const durable = this.deps.durable();
    const deadline = clock.now() + settings.commandWaitMs;
    let delay = 10;
    for (;;) {
      const status = await durable.getStatus(instanceId);
      const custom = customStatusOf(status, pick);
      if (custom !== undefined) return custom;
      if (status !== undefined && isFinished(status)) {
        throw new AppError('Internal', `Orchestration ${instanceId} ended ${status.runtimeStatus} without an answer`, {
          extra: { output: status.output },
        });
      }
      if (clock.now() + delay > deadline) return undefined;
      await clock.sleep(delay);
      delay = Math.min(250, Math.ceil(delay * 1.5));
    }
  }

  private pending(instanceId: string): Pending {
    return { pending: true, instanceId };
  }

  /** The Durable management links of an instance, on the origin of the request being answered. */
  links(instanceId: string, requestUrl: URL): ManagementLinks {
    return this.deps.durable().managementLinks(instanceId, requestUrl);
  }
}
