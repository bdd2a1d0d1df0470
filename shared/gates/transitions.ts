/**
 * The gate's state rules as pure functions: (record, input) → (next record, result). The store writes
 * what these return with the ETag of the record they were given, so each rule is applied to exactly
 * the state it read or not at all; every rule is unit-tested here without storage or a host.
 *
 * Rules:
 * - A gate is created closed with generation 1; creating it again changes nothing.
 * - `admit` while closed registers runs with the current generation, up to the waiting limit; after
 *   the release it registers them late, with the release, so a late joiner can never miss it.
 * - `release` names the generation it releases: the current closed one is released exactly once; a
 *   second release of it answers the first; an older generation is `superseded` and changes nothing.
 *   The release lets go every run registered since `openSince` — runs carry no state of their own
 *   that a release has to change, so a release costs the same for ten runs or ten thousand.
 * - `reset` names the generation it resets from, so two concurrent resets make one new generation.
 *   Runs still waiting on a closed gate are carried into the new generation (`openSince` stays, so
 *   the next release lets them go); a released gate starts the new generation with nobody waiting.
 * - A run's state is derived (`runStateOf`): waiting while the gate is closed and it registered since
 *   `openSince`; otherwise proceeded with the first release of a generation at or after its own.
 */
import type {
  AdmitInput,
  AdmitResult,
  CreateInput,
  CreateResult,
  GateRecord,
  GateSnapshot,
  ReleaseInfo,
  ReleaseInput,
  ReleaseRecord,
  ReleaseResult,
  ResetInput,
  ResetResult,
  RunRecord,
  RunState,
} from './operations';

export interface Transition<R> {
  /** The record to store; `undefined` when the gate does not exist (and still must not). */
  readonly record: GateRecord | undefined;
  readonly result: R;
}

export function snapshotOf(record: GateRecord): GateSnapshot {
  const { waiting, registered, late } = record.counts;
  return {
    name: record.name,
    generation: record.generation,
    state: record.state,
    createdAt: record.createdAt,
    generationStartedAt: record.generationStartedAt,
    releaseAt: record.releaseAt,
    release: record.release,
    waiters: { waiting, registered, late, proceeded: record.state === 'released' ? registered + late : 0 },
  };
}

export function create(record: GateRecord | undefined, input: CreateInput): Transition<CreateResult> {
  if (record !== undefined) return { record, result: { created: false, gate: snapshotOf(record) } };
  const created: GateRecord = {
    version: 2,
    name: input.name,
    generation: 1,
    state: 'closed',
    createdAt: input.at,
    generationStartedAt: input.at,
    releaseAt: input.releaseAt,
    release: null,
    openSince: 1,
    counts: { waiting: 0, registered: 0, late: 0, actionsWaiting: 0 },
  };
  return { record: created, result: { created: true, gate: snapshotOf(created) } };
}

/** Registers `input.withAction.length` runs (the first `accepted` of them) with the current generation. */
export function admit(record: GateRecord | undefined, input: AdmitInput): Transition<AdmitResult> {
  if (record === undefined) return { record, result: { outcome: 'missing' } };
  const n = input.withAction.length;
  if (record.state === 'released' && record.release !== null) {
    const next: GateRecord = { ...record, counts: { ...record.counts, late: record.counts.late + n } };
    return { record: next, result: { outcome: 'late', generation: record.generation, accepted: n, release: record.release } };
  }
  const accepted = Math.max(0, Math.min(n, input.maxWaiters - record.counts.waiting));
  const actions = input.withAction.slice(0, accepted).filter(Boolean).length;
  const next: GateRecord =
    accepted === 0
      ? record
      : {
          ...record,
          counts: {
            ...record.counts,
            waiting: record.counts.waiting + accepted,
            registered: record.counts.registered + accepted,
            actionsWaiting: record.counts.actionsWaiting + actions,
          },
        };
  return { record: next, result: { outcome: 'waiting', generation: record.generation, accepted, limit: input.maxWaiters } };
}

export function release(record: GateRecord | undefined, input: ReleaseInput): Transition<ReleaseResult> {
  if (record === undefined) return { record, result: { outcome: 'missing' } };
  if ((input.generation ?? record.generation) !== record.generation)
    return { record, result: { outcome: 'superseded', gate: snapshotOf(record) } };
  if (record.state === 'released') return { record, result: { outcome: 'alreadyReleased', gate: snapshotOf(record) } };
  const info: ReleaseInfo = {
    generation: record.generation,
    at: input.at,
    by: input.by,
    how: input.how,
    ...(input.note === undefined ? {} : { note: input.note }),
  };
  const next: GateRecord = {
    ...record,
    state: 'released',
    release: info,
    counts: { ...record.counts, waiting: 0, actionsWaiting: 0 },
  };
  const released: ReleaseRecord = { ...info, from: record.openSince, actions: record.counts.actionsWaiting };
  return { record: next, result: { outcome: 'released', gate: snapshotOf(next), release: released } };
}

export function reset(record: GateRecord | undefined, input: ResetInput): Transition<ResetResult> {
  if (record === undefined) return { record, result: { outcome: 'missing' } };
  if (input.fromGeneration !== record.generation) return { record, result: { outcome: 'alreadyReset', gate: snapshotOf(record) } };
  const closed = record.state === 'closed';
  const carried = closed ? record.counts.waiting : 0;
  const next: GateRecord = {
    ...record,
    generation: record.generation + 1,
    state: 'closed',
    generationStartedAt: input.at,
    releaseAt: input.releaseAt,
    release: null,
    openSince: closed ? record.openSince : record.generation + 1,
    counts: { waiting: carried, registered: carried, late: 0, actionsWaiting: closed ? record.counts.actionsWaiting : 0 },
  };
  return { record: next, result: { outcome: 'reset', gate: snapshotOf(next), carried } };
}

/**
 * Which release a run needs to know its state beyond the gate record: a run registered before the
 * gate's current run of closed generations was let go by an earlier release — the first release of a
 * generation at or after its own. Undefined when the gate record answers on its own.
 */
export function earlierReleaseNeeded(run: RunRecord, gate: GateRecord): number | undefined {
  if (run.late) return gate.generation === run.generation ? undefined : run.generation;
  const releasedNow = gate.state === 'released' && run.generation >= gate.openSince;
  const waitingNow = gate.state === 'closed' && run.generation >= gate.openSince;
  return releasedNow || waitingNow ? undefined : run.generation;
}

/**
 * The run's state. `earlier` is the release `earlierReleaseNeeded` asked for (the first release of a
 * generation ≥ the one it named), when it did. A late run proceeded when it registered; a waiting one
 * when its release was made.
 */
export function runStateOf(run: RunRecord, gate: GateRecord, earlier?: ReleaseInfo): RunState {
  const failed = run.outcome?.state === 'failed';
  const letGo = (release: ReleaseInfo, proceededAt: string): RunState => ({
    state: failed ? 'failed' : 'proceeded',
    generation: release.generation,
    release,
    proceededAt,
  });
  if (earlierReleaseNeeded(run, gate) === undefined) {
    if (gate.state === 'closed' && !run.late) return { state: 'waiting', generation: gate.generation };
    const release = gate.release as ReleaseInfo;
    return letGo(release, run.late ? run.registeredAt : release.at);
  }
  if (earlier === undefined)
    throw new Error(`Run ${run.runId} of gate ${run.gate} needs the release of generation ${run.generation} or later`);
  return letGo(earlier, run.late ? run.registeredAt : earlier.at);
}
