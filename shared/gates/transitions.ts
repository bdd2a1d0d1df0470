/**
 * The gate's state machine as pure functions: (record, input) → (next record, result). The entity
 * only stores what these return, so every rule (generations, idempotent release and reset, late
 * joiners) is unit-tested here without a host.
 *
 * Rules:
 * - A gate is created closed with generation 1; creating it again changes nothing.
 * - `register` while closed adds the run to the waiting list (once); after the release it answers
 *   "already released" with the release, so a late joiner can never miss it.
 * - `release` names the generation it releases: the current closed one is released exactly once; a
 *   second release of it answers the first; an older generation is `superseded` and changes nothing.
 * - `reset` names the generation it resets from, so two concurrent resets make one new generation.
 *   Runs still waiting on a closed gate are carried into the new generation (they wait for "the next
 *   release"); a released gate starts the new generation with nobody waiting.
 */
import type { CreateResult, GateOperationInput, GateRecord, GateSnapshot, RegisterResult, ReleaseResult, ResetResult } from './operations';

export interface Transition<R> {
  /** The record to store; `undefined` when the gate does not exist (and still must not). */
  readonly record: GateRecord | undefined;
  readonly result: R;
}

export function snapshotOf(record: GateRecord): GateSnapshot {
  return {
    name: record.name,
    generation: record.generation,
    state: record.state,
    createdAt: record.createdAt,
    generationStartedAt: record.generationStartedAt,
    releaseAt: record.releaseAt,
    release: record.release,
    waiters: { waiting: record.waiting.length, ...record.counts },
  };
}

export function create(record: GateRecord | undefined, input: GateOperationInput<'create'>): Transition<CreateResult> {
  if (record !== undefined) return { record, result: { created: false, gate: snapshotOf(record) } };
  const created: GateRecord = {
    version: 1,
    name: input.name,
    generation: 1,
    state: 'closed',
    createdAt: input.at,
    generationStartedAt: input.at,
    releaseAt: input.releaseAt,
    release: null,
    waiting: [],
    counts: { registered: 0, late: 0, proceeded: 0 },
  };
  return { record: created, result: { created: true, gate: snapshotOf(created) } };
}

export function register(record: GateRecord | undefined, input: GateOperationInput<'register'>): Transition<RegisterResult> {
  if (record === undefined) return { record, result: { outcome: 'missing' } };
  if (record.state === 'released' && record.release !== null) {
    const next = { ...record, counts: { ...record.counts, late: record.counts.late + 1 } };
    return { record: next, result: { outcome: 'released', generation: record.generation, release: record.release } };
  }
  if (record.waiting.includes(input.waiter)) return { record, result: { outcome: 'waiting', generation: record.generation } };
  if (record.waiting.length >= input.maxWaiters) {
    return { record, result: { outcome: 'full', generation: record.generation, limit: input.maxWaiters } };
  }
  const next: GateRecord = {
    ...record,
    waiting: [...record.waiting, input.waiter],
    counts: { ...record.counts, registered: record.counts.registered + 1 },
  };
  return { record: next, result: { outcome: 'waiting', generation: record.generation } };
}

export function release(record: GateRecord | undefined, input: GateOperationInput<'release'>): Transition<ReleaseResult> {
  if (record === undefined) return { record, result: { outcome: 'missing' } };
  if ((input.generation ?? record.generation) !== record.generation)
    return { record, result: { outcome: 'superseded', gate: snapshotOf(record) } };
  if (record.state === 'released') return { record, result: { outcome: 'alreadyReleased', gate: snapshotOf(record) } };
  const next: GateRecord = {
    ...record,
    state: 'released',
    release: {
      generation: record.generation,
      at: input.at,
      by: input.by,
      how: input.how,
      ...(input.note === undefined ? {} : { note: input.note }),
    },
    waiting: [],
  };
  return { record: next, result: { outcome: 'released', gate: snapshotOf(next), waiters: record.waiting } };
}

export function reset(record: GateRecord | undefined, input: GateOperationInput<'reset'>): Transition<ResetResult> {
  if (record === undefined) return { record, result: { outcome: 'missing' } };
  if (input.fromGeneration !== record.generation) return { record, result: { outcome: 'alreadyReset', gate: snapshotOf(record) } };
  const carried = record.state === 'closed' ? record.waiting : [];
  const next: GateRecord = {
    ...record,
    generation: record.generation + 1,
    state: 'closed',
    generationStartedAt: input.at,
    releaseAt: input.releaseAt,
    release: null,
    waiting: carried,
    counts: { registered: carried.length, late: 0, proceeded: 0 },
  };
  return { record: next, result: { outcome: 'reset', gate: snapshotOf(next), carried: carried.length } };
}

/** Counts a run that proceeded after the release of `generation`; reports from older generations are dropped. */
export function proceeded(record: GateRecord | undefined, input: GateOperationInput<'proceeded'>): Transition<null> {
  if (record?.generation !== input.generation || record.state !== 'released') return { record, result: null };
  return { record: { ...record, counts: { ...record.counts, proceeded: record.counts.proceeded + 1 } }, result: null };
}
