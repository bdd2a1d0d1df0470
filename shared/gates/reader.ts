/**
 * Reading gates and gated runs: the gate row (and, for a run, its row and the release that let it go).
 * Reads need no Durable client; the watch hub's read loop, the routes and the commands read here.
 */
import { AppError } from '../errors';
import { owns, type Reader } from '../ownership';
import type { Page, PageRequest } from '../storage/list';
import { noTelemetry, type Telemetry } from '../telemetry/port';
import type { GateActionResult } from './actions';
import { gateTelemetry } from './metrics';
import { gateInstanceIds } from './names';
import type { GateSnapshot, ReleaseInfo, RunState } from './operations';
import type { GateStore } from './store';
import { earlierReleaseNeeded, runStateOf, snapshotOf } from './transitions';

export interface ReaderDeps {
  readonly store: GateStore;
  /** Where the capability's metrics and spans go (none when absent). */
  readonly telemetry?: Telemetry;
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

export function gateNotFound(name: string): AppError {
  return new AppError('NotFound', `No gate named "${name}" (create it with PUT /api/gates/${name})`);
}

export class GateReader {
  private readonly telemetry;

  constructor(private readonly deps: ReaderDeps) {
    this.telemetry = (deps.telemetry ?? noTelemetry).of(gateTelemetry);
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
    if (gate === undefined) throw gateNotFound(name);
    return gate;
  }

  /** A gated run's state; 404 when there is no such run. */
  /** The run's state for its owner or an admin; anyone else is told there is no such run (shared/ownership.ts). */
  async runStatus(name: string, runId: string, reader?: Reader): Promise<RunView> {
    const { store } = this.deps;
    const [run, first] = await Promise.all([store.readRun(name, runId), store.readGate(name)]);
    // `reader` undefined: the app's own read.
    if (run === undefined || first === undefined || (reader !== undefined && !owns(reader, run.value.owner)))
      throw new AppError('NotFound', `No run "${runId}" of gate "${name}"`);
    // Read together, the gate may be older than the run's outcome: an outcome comes after a release.
    const gate = run.value.outcome !== undefined && first.value.state === 'closed' ? ((await store.readGate(name)) ?? first) : first;
    const needed = earlierReleaseNeeded(run.value, gate.value);
    const earlier = needed === undefined ? undefined : await store.releaseFrom(name, needed);
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
}
