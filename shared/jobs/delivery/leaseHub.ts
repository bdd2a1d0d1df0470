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
 * that does not wait (`wait: 0`) takes no place at all. A waiter loses its place and is answered at
 * once even while a receive sized for it is under way, so no more requests wait than the cap (it
 * used to wait for that receive: up to 32 more than the cap for as long as the receive took): a
 * message that receive brings with no waiter left for it is kept for the next request on the queue,
 * which hides it for a whole lease of its own (see KeptMessages).
 *
 * A queue may have a lane (a declared processor's retry lane: leased batches, retries and leases that
 * ran out): each poll receives from the lane first and from the queue for the waiters the lane left.
 * A lane found empty is looked at again after a quarter of TALLYHO_JOBS_LEASE_POLL_MAX_MS (the
 * lane's look interval), not on every poll of a busy queue: a batch due in the lane is received
 * within that of its due time however long the queue's backlog, at four more receives per poll
 * interval while the queue is busy (an idle loop polls both once per poll interval). A retry this
 * instance recorded tells the hub when it falls due (`due`), and the lane is looked at then too.
 */
import type { Clock } from '../../clock';
import { HeldPool, type Place, shareOf } from '../../shares';
import type { Logger } from '../../log';
import { KeptMessages } from './keptMessages';
import { LaneLooks } from './laneLooks';
import { type ProcessorQueues, type QueuedMessage, ReceiptLost } from './processorQueues';

/** A message and when the receive that took it was sent: its lease began no earlier. */
export interface ReceivedMessage extends QueuedMessage {
  readonly receivedAt: number;
  /** The queue it was received from (the lane or the queue itself). */
  readonly queue: string;
}

/**
 * Why a wait ended without a message: its time ran out (it held its place to the end), it lost its
 * place to a fairer share, or the instance is stopping. The route says which (Server-Timing `desc`).
 */
export type WaitEnd = 'timeout' | 'preempted' | 'stopping';

interface Waiter {
  readonly deadline: number;
  /** How long the message it takes must stay invisible: its own lease's length. */
  readonly visibilitySeconds: number;
  /** The poller's poll count when it joined: it is answered empty only after a poll of its own. */
  readonly since: number;
  readonly resolve: (message: ReceivedMessage) => void;
  /** Answers it empty, saying why. */
  readonly end: (why: WaitEnd) => void;
  readonly reject: (err: unknown) => void;
}

interface Poller {
  readonly waiters: Waiter[];
  count: number;
  /** Waiters the receive under way was sized for (0 when none is): they take what it brings. */
  receiving: number;
  /** Ends the current idle pause early (a wake, a new waiter with an earlier deadline). */
  nudge: (() => void) | undefined;
  /** The queue's lane, read first (undefined: none). */
  readonly lane: string | undefined;
}

export interface LeaseHubOptions {
  readonly pollMaxMs: number;
  readonly maxWaiters: number;
}

const firstPauseMs = 50;
/** How long a lane found empty is left before it is looked at again (see the module comment). */
function laneLookMs(pollMaxMs: number): number {
  return Math.max(firstPauseMs, Math.round(pollMaxMs / 4));
}

/** Most messages one receive may ask for. */
const receiveMax = 32;

export class LeaseHub {
  private readonly pollers = new Map<string, Poller>();
  /** Messages received for waiters that were gone when they came (see the module comment). */
  private readonly kept: KeptMessages<ReceivedMessage>;
  /** When each lane is looked at (this instance's memory: another instance keeps its own). */
  private readonly lanes: LaneLooks;
  private waiting = 0;
  private closed = false;
  private readonly places: HeldPool;
  /** Polls made (for the benchmark's idle figure and tests). */
  polls = 0;

  constructor(
    private readonly queues: Pick<ProcessorQueues, 'receive' | 'update'>,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: LeaseHubOptions,
  ) {
    this.places = new HeldPool(() => shareOf(this.options.maxWaiters), 'preempt');
    this.kept = new KeptMessages(clock, receiveMax * 2);
    this.lanes = new LaneLooks(clock, laneLookMs(options.pollMaxMs));
  }

  /**
   * The next message of `lane` (when given) or else of `queue`, invisible for `visibilitySeconds`, or
   * undefined once `deadline` passed or `holder` (a Caller id) lost its place to a fairer share, with
   * `onEnd` told which. One queue has one lane (its first request's names it).
   */
  async next(
    queue: string,
    visibilitySeconds: number,
    deadline: number,
    holder: string,
    lane?: string,
    onEnd?: (why: WaitEnd) => void,
  ): Promise<ReceivedMessage | undefined> {
    if (this.closed) {
      onEnd?.('stopping');
      return undefined;
    }
    const kept = this.kept.take(queue);
    return (
      (kept !== undefined && (await this.retime(kept, visibilitySeconds))) ||
      this.wait(queue, visibilitySeconds, deadline, holder, lane, onEnd)
    );
  }

  /**
   * A kept message, hidden for `visibilitySeconds` from now and received now: its lease is as long as
   * one just received (an update, not a receive, so its dequeue count — its items' attempt — stays).
   * Undefined when it was no longer held (its invisibility ended, and another request may have it).
   */
  private async retime(message: ReceivedMessage, visibilitySeconds: number): Promise<ReceivedMessage | undefined> {
    const receivedAt = this.clock.now();
    try {
      const popReceipt = await this.queues.update(message.queue, message.messageId, message.popReceipt, visibilitySeconds);
      return { ...message, popReceipt, receivedAt };
    } catch (err) {
      if (err instanceof ReceiptLost) return undefined;
      throw err;
    }
  }

  private wait(
    queue: string,
    visibilitySeconds: number,
    deadline: number,
    holder: string,
    lane: string | undefined,
    onEnd: ((why: WaitEnd) => void) | undefined,
  ): Promise<ReceivedMessage | undefined> {
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
      const answer = settle(resolve);
      const waiter: Waiter = {
        deadline,
        visibilitySeconds,
        since: poller?.count ?? 0,
        resolve: answer,
        end: (why) => {
          if (!settled) onEnd?.(why);
          answer(undefined);
        },
        reject: settle(reject),
      };
      if (deadline > this.clock.now()) {
        const admitted = this.places.admit(holder, () => this.preempted(queue, waiter));
        if (admitted.ok) place = admitted.place;
      }
      if (poller === undefined) {
        poller = { waiters: [waiter], count: 0, receiving: 0, nudge: undefined, lane };
        this.pollers.set(queue, poller);
        void this.run(queue, poller);
      } else {
        poller.waiters.push(waiter);
        poller.nudge?.();
      }
    });
  }

  /**
   * A waiter's place went to a fairer share: it answers empty now, even when a receive under way was
   * sized for it (that receive then has one waiter fewer: what it brings beyond them is kept).
   */
  private preempted(queue: string, waiter: Waiter): void {
    const poller = this.pollers.get(queue);
    const at = poller?.waiters.indexOf(waiter) ?? -1;
    // Not listed: it is being answered already.
    if (poller === undefined || at < 0) return;
    poller.waiters.splice(at, 1);
    if (at < poller.receiving) poller.receiving--;
    waiter.end('preempted');
  }

  /** A batch of `lane` falls due at `at` (ms, visible by then): the lane is looked at then, not only at its look interval. */
  due(lane: string, at: number): void {
    this.lanes.due(lane, at);
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
      for (const w of poller.waiters.splice(poller.receiving)) w.end('stopping');
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
          for (const w of poller.waiters.splice(0)) w.end('stopping');
          return;
        }
        const now = this.clock.now();
        // Requests whose wait is over get their empty answer.
        for (let i = poller.waiters.length - 1; i >= 0; i--) {
          const w = poller.waiters[i] as Waiter;
          if (w.deadline <= now && poller.count > w.since) {
            poller.waiters.splice(i, 1);
            w.end('timeout');
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
        const received = await this.receive(queue, poller, visibility, receivedAt).finally(() => (poller.receiving = 0));
        // A stop during the receive: the requests it brought nothing are answered now, not after a pause.
        if (received > 0 || this.closed) {
          pause = firstPauseMs;
          continue;
        }
        if (poller.waiters.length === 0) return;
        const due = poller.lane === undefined ? Infinity : this.lanes.soonest(poller.lane);
        const soonest = Math.min(due, ...poller.waiters.map((w) => (poller.count > w.since ? w.deadline : 0)));
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
          lane: poller.lane,
        };
        this.pollers.set(queue, next);
        void this.run(queue, next);
      }
    }
  }

  /**
   * One poll: the lane (when due) for the waiters the receive is sized for, then the queue for those
   * it left; each message goes to its waiter as soon as it is received. How many were handed out.
   */
  private async receive(queue: string, poller: Poller, visibility: number, receivedAt: number): Promise<number> {
    let handed = 0;
    const hand = (from: string, messages: readonly QueuedMessage[]): void => {
      for (const message of messages) {
        const received: ReceivedMessage = { ...message, receivedAt, queue: from };
        // A waiter pre-empted meanwhile left the front of the line: a later one whose lease fits in
        // what the receive asked for takes its message, or the message is kept.
        const at = poller.waiters.findIndex((w) => w.visibilitySeconds <= visibility);
        if (at < 0) this.kept.keep(queue, received, visibility);
        else (poller.waiters.splice(at, 1)[0] as Waiter).resolve(received);
      }
      poller.receiving = Math.max(0, poller.receiving - messages.length);
      handed += messages.length;
    };
    const { lane } = poller;
    if (lane !== undefined && this.lanes.lookNow(lane)) {
      const fromLane = await this.queues.receive(lane, poller.receiving, visibility);
      this.lanes.looked(lane, fromLane.length < poller.receiving);
      hand(lane, fromLane);
    }
    // A stop while the lane was read answers the rest empty (close() left only those this poll was sized for).
    if (poller.receiving > 0 && !this.closed) hand(queue, await this.queues.receive(queue, poller.receiving, visibility));
    return handed;
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
