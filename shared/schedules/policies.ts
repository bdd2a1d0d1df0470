/**
 * The two policies, as pure functions (the orchestrator replays them, the unit tests pin them).
 *
 * Catch-up decides what happens to fires that came due while nothing could run them (the app was
 * down or the timer fired late). A fire is *on time* when it is at most the grace period old when
 * the schedule looks at it; older ones are *missed*:
 * - `none`: run only an on-time fire; every missed one is recorded as missed.
 * - `once`: run one fire for the whole backlog (the newest), record the rest as missed.
 * - `all`: run each of the newest `limit` fires, oldest first; record older ones as missed.
 *
 * Overlap decides what happens to a fire that comes due while a run is *in progress*. A run is in
 * progress from the moment its fire is claimed (recorded as `running`) until its outcome is
 * recorded: for a queue message, a Service Bus message and a gate release that is the one activity
 * that sends it (milliseconds); for a webhook, until the endpoint answers or the timeout passes; for a
 * job, until the job reaches a final state (polled), however long that takes.
 * - `skip`: the fire is recorded as skipped (`overlap`) and not run.
 * - `bufferOne`: the fire waits and runs as soon as the run in progress ends; while one fire waits,
 *   further fires are skipped.
 * - `allow`: the fire runs alongside, up to the concurrency bound (beyond it: skipped,
 *   `concurrencyLimit`).
 * Fires released by one catch-up decision never skip each other: under `skip` and `bufferOne` they
 * wait and run one after another. Trigger-now requests are fires like any other.
 */
import type { CatchUpPolicy, OverlapPolicy } from './definition';
import { dueFires, type Timing } from './timing';

export type FireKind = 'scheduled' | 'catchUp' | 'trigger';

export interface Fire {
  /** When the fire was due (a trigger: when it was requested). ISO-8601 UTC. */
  readonly at: string;
  readonly kind: FireKind;
  /** The trigger request it answers, for trigger fires. */
  readonly triggerId?: string;
}

export interface CatchUpDecision {
  /** Fires to run, oldest first. */
  readonly run: readonly Fire[];
  /** Fires that came due and will not run. */
  readonly missed: number;
  /** The newest fire looked at; the next fire comes after it. Unchanged when nothing was due. */
  readonly cursor: Date;
}

export function selectDueFires(timing: Timing, policy: CatchUpPolicy, cursor: Date, now: Date, graceMs: number): CatchUpDecision {
  const keep = policy.policy === 'all' ? policy.limit : 1;
  const due = dueFires(timing, cursor, now, keep);
  const newest = due.latest[due.latest.length - 1];
  if (newest === undefined) return { run: [], missed: 0, cursor };
  const fire = (at: Date): Fire => ({ at: at.toISOString(), kind: now.getTime() - at.getTime() > graceMs ? 'catchUp' : 'scheduled' });
  let run: Fire[];
  if (policy.policy === 'all') run = due.latest.map(fire);
  else if (policy.policy === 'once') run = [fire(newest)];
  else run = now.getTime() - newest.getTime() <= graceMs ? [fire(newest)] : [];
  return { run, missed: due.count - run.length, cursor: newest };
}

/** A fire waiting for the run in progress; `backlog` marks fires queued by one catch-up decision. */
export interface QueuedFire extends Fire {
  readonly backlog?: boolean;
}

export type Arrival =
  | { readonly action: 'start'; readonly fire: Fire }
  | { readonly action: 'queue'; readonly fire: QueuedFire }
  | { readonly action: 'skip'; readonly fire: Fire; readonly reason: 'overlap' | 'concurrencyLimit' };

export interface SlotState {
  /** Runs in progress. */
  readonly running: number;
  /** Fires waiting for the run in progress to end. */
  readonly queued: readonly QueuedFire[];
}

/**
 * What to do with fires that arrive together (one catch-up decision, one trigger), given the runs
 * in progress. Returns one arrival per fire, in order.
 */
export function admitFires(policy: OverlapPolicy, slots: SlotState, fires: readonly Fire[], maxConcurrent: number): Arrival[] {
  let running = slots.running;
  let queued = slots.queued.length;
  let held = slots.queued.some((f) => f.backlog !== true);
  const batch = fires.length > 1;
  return fires.map((fire): Arrival => {
    if (policy === 'allow') {
      if (running >= maxConcurrent) return { action: 'skip', fire, reason: 'concurrencyLimit' };
      running++;
      return { action: 'start', fire };
    }
    if (running === 0 && queued === 0) {
      running++;
      return { action: 'start', fire };
    }
    if (batch) {
      queued++;
      return { action: 'queue', fire: { ...fire, backlog: true } };
    }
    if (policy === 'bufferOne' && !held) {
      held = true;
      queued++;
      return { action: 'queue', fire };
    }
    return { action: 'skip', fire, reason: 'overlap' };
  });
}

/** The fire to start when a run ends, if one waits and nothing else is in progress. */
export function nextQueued(policy: OverlapPolicy, slots: SlotState): QueuedFire | undefined {
  if (policy === 'allow' || slots.running > 0) return undefined;
  return slots.queued[0];
}
