/**
 * Long polls for leases. Every lease request of an instance that waits on one processor's queue is
 * served by one poll loop of that queue: it receives as many messages as there are waiters (up to
 * 32 per call) and hands them out in arrival order. An empty queue is polled with a back-off that
 * doubles from 50 ms to TALLYHO_JOBS_LEASE_POLL_MAX_MS, however many requests wait, so a thousand
 * idle workers cost what one does; a submission to the processor on this instance wakes the loop.
 * A message is received only for a waiter that is there to take it, so none is received and left
 * (its dequeue count, which is the items' attempt, would move for nothing).
 * On a graceful stop (close) every waiting request gets its empty answer at once, the one a wait that
 * ran out gets, and later requests get it without waiting: the host's drain is not held by long polls.
 *
 * Places among TALLYHO_JOBS_MAX_LEASE_WAITERS are fair shares by caller (shared/shares.ts,
 * pre-empting): a caller at its quarter, or a newcomer to a full instance, ends the oldest wait of
 * the largest holder with the empty answer a timeout gives, so nobody is refused for room. A request
 * that does not wait (`wait: 0`) takes no place at all. A waiter a receive under way was sized for
 * takes what it brings even when its place went: at most 32 more than the cap, for one receive.
 */
import type { Clock } from '../../clock';
import { HeldPool, type Place, shareOf } from '../../shares';
import type { Logger } from '../../log';
import type { ProcessorQueues, QueuedMessage } from './processorQueues';

/** A message and when the receive that took it was sent: its lease began no earlier. */
export interface ReceivedMessage extends QueuedMessage {
  readonly receivedAt: number;
}

interface Waiter {
  readonly deadline: number;
  /** How long the message it takes must stay invisible: its own lease's length. */
  readonly visibilitySeconds: number;
  /** The poller's poll count when it joined: it is answered empty only after a poll of its own. */
  readonly since: number;
  readonly resolve: (message: ReceivedMessage | undefined) => void;
  readonly reject: (err: unknown) => void;
}

interface Poller {
  readonly waiters: Waiter[];
  count: number;
  /** Waiters the receive under way was sized for (0 when none is): they take what it brings. */
  receiving: number;
  /** Ends the current idle pause early (a wake, a new waiter with an earlier deadline). */
  nudge: (() => void) | undefined;
}

export interface LeaseHubOptions {
  readonly pollMaxMs: number;
  readonly maxWaiters: number;
}

const firstPauseMs = 50;
/** Most messages one receive may ask for. */
const receiveMax = 32;

export class LeaseHub {
  private readonly pollers = new Map<string, Poller>();
  private waiting = 0;
  private closed = false;
  private readonly places: HeldPool;
  /** Polls made (for the benchmark's idle figure and tests). */
  polls = 0;

  constructor(
    private readonly queues: ProcessorQueues,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: LeaseHubOptions,
  ) {
    this.places = new HeldPool(() => shareOf(this.options.maxWaiters), 'preempt');
  }

  /**
   * The next message of `queue`, invisible for `visibilitySeconds`, or undefined once `deadline`
   * passed or `holder` (a Caller id) lost its place to a fairer share.
   */
  next(queue: string, visibilitySeconds: number, deadline: number, holder: string): Promise<ReceivedMessage | undefined> {
    if (this.closed) return Promise.resolve(undefined);
    return new Promise((resolve, reject) => {
      this.waiting++;
      let poller = this.pollers.get(queue);
      // Settled once, by whichever comes first: a message, the wait's end, the loss of its place, an error.
      let settled = false;
      let place: Place | undefined;
      const settle =
        <T>(f: (v: T) => void) =>
        (v: T): void => {
          if (settled) return;
          settled = true;
          this.waiting--;
          place?.release();
          f(v);
        };
      const waiter: Waiter = { deadline, visibilitySeconds, since: poller?.count ?? 0, resolve: settle(resolve), reject: settle(reject) };
      if (deadline > this.clock.now()) {
        const admitted = this.places.admit(holder, () => this.preempted(queue, waiter));
        if (admitted.ok) place = admitted.place;
      }
      if (poller === undefined) {
        poller = { waiters: [waiter], count: 0, receiving: 0, nudge: undefined };
        this.pollers.set(queue, poller);
        void this.run(queue, poller);
      } else {
        poller.waiters.push(waiter);
        poller.nudge?.();
      }
    });
  }

  /** A waiter's place went to a fairer share: it answers empty now, unless a receive under way was sized for it. */
  private preempted(queue: string, waiter: Waiter): void {
    const poller = this.pollers.get(queue);
    const at = poller?.waiters.indexOf(waiter) ?? -1;
    // Not listed: it is being answered already. Within the receive's count: it takes what that brings.
    if (poller === undefined || at < 0 || at < poller.receiving) return;
    poller.waiters.splice(at, 1);
    waiter.resolve(undefined);
  }

  /** New envelopes on `queue`: poll it now. */
  wake(queue: string): void {
    this.pollers.get(queue)?.nudge?.();
  }

  /**
   * The instance is stopping: every waiting request is answered empty now, and later ones at once —
   * but those a receive under way was sized for, which take what it brings (a message received and
   * left would come back with its attempt counted for nothing); their loop then ends.
   */
  close(): void {
    this.closed = true;
    for (const poller of this.pollers.values()) {
      for (const w of poller.waiters.splice(poller.receiving)) w.resolve(undefined);
      poller.nudge?.();
    }
  }

  /** Requests waiting now (all queues). */
  get waiters(): number {
    return this.waiting;
  }

  private async run(queue: string, poller: Poller): Promise<void> {
    let pause = firstPauseMs;
    try {
      for (;;) {
        if (this.closed) {
          for (const w of poller.waiters.splice(0)) w.resolve(undefined);
          return;
        }
        const now = this.clock.now();
        // Requests whose wait is over get their empty answer.
        for (let i = poller.waiters.length - 1; i >= 0; i--) {
          const w = poller.waiters[i] as Waiter;
          if (w.deadline <= now && poller.count > w.since) {
            poller.waiters.splice(i, 1);
            w.resolve(undefined);
          }
        }
        if (poller.waiters.length === 0) return;
        this.polls++;
        poller.count++;
        const receivedAt = this.clock.now();
        poller.receiving = Math.min(receiveMax, poller.waiters.length);
        // Waiters of one queue can hold different lease lengths (a declaration changed while some waited,
        // each request having read its own): the receive hides the messages for the longest of those it
        // is for, so no lease ends after its message is visible again (a shorter one's items come back
        // that much later when it runs out).
        const visibility = Math.max(...poller.waiters.slice(0, poller.receiving).map((w) => w.visibilitySeconds));
        const messages = await this.queues.receive(queue, poller.receiving, visibility).finally(() => (poller.receiving = 0));
        for (const message of messages) (poller.waiters.shift() as Waiter).resolve({ ...message, receivedAt });
        if (messages.length > 0) {
          pause = firstPauseMs;
          continue;
        }
        if (poller.waiters.length === 0) return;
        const soonest = Math.min(...poller.waiters.map((w) => (poller.count > w.since ? w.deadline : 0)));
        await this.pause(poller, Math.max(0, Math.min(pause, soonest - this.clock.now())));
        pause = Math.min(pause * 2, this.options.pollMaxMs);
      }
    } catch (err) {
      // Storage failing: every waiter gets the error (a 503 with Retry-After), none waits on a dead loop.
      this.logger.log('warn', 'jobs.lease_poll_failed', { queue, error: err });
      for (const w of poller.waiters.splice(0)) w.reject(err);
    } finally {
      if (this.pollers.get(queue) === poller) this.pollers.delete(queue);
      // A waiter that joined after the loop decided to end still needs one.
      if (poller.waiters.length > 0) {
        const next: Poller = {
          waiters: poller.waiters.splice(0),
          count: poller.count,
          receiving: 0,
          nudge: undefined,
        };
        this.pollers.set(queue, next);
        void this.run(queue, next);
      }
    }
  }

  private pause(poller: Poller, ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    const stop = new AbortController();
    poller.nudge = () => stop.abort();
    return this.clock
      .sleep(ms, stop.signal)
      .catch(() => undefined)
      .finally(() => {
        poller.nudge = undefined;
      });
  }
}
