/**
 * Messages the lease hub received for a request that was gone by the time they came (its place went
 * to a fairer share while the receive was under way: ./leaseHub.ts), kept per queue for the next
 * request instead of left to come back when their invisibility ends — which would cost their items an
 * attempt for nothing (the dequeue count is the attempt). The request that takes one hides it again
 * for its own whole lease (an update keeps the dequeue count), so its lease is as long, and begins as
 * late, as one from a receive. This instance's memory only: a kill loses them, and they come back as
 * a killed worker's batch does.
 */
import type { Clock } from '../../clock';

interface Kept<M> {
  readonly message: M;
  /** How long the receive hid it for. */
  readonly visibilitySeconds: number;
}

export class KeptMessages<M extends { readonly receivedAt: number }> {
  private readonly byQueue = new Map<string, Kept<M>[]>();

  /** `max`: messages kept per queue at most (past it, one comes back when its invisibility ends). */
  constructor(
    private readonly clock: Clock,
    private readonly max: number,
  ) {}

  keep(queue: string, message: M, visibilitySeconds: number): void {
    const list = this.live(queue);
    if (list.length < this.max) list.push({ message, visibilitySeconds });
    this.byQueue.set(queue, list);
  }

  /**
   * A kept message of `queue` still hidden for a second or more (the next request re-times it: a whole
   * lease from then), the oldest first; undefined when there is none.
   */
  take(queue: string): M | undefined {
    const list = this.live(queue, 1000);
    const taken = list.shift();
    if (list.length === 0) this.byQueue.delete(queue);
    else this.byQueue.set(queue, list);
    return taken?.message;
  }

  /** The kept messages of `queue` still hidden `marginMs` from now (the others are back in their queue, or about to be). */
  private live(queue: string, marginMs = 0): Kept<M>[] {
    const now = this.clock.now() + marginMs;
    return (this.byQueue.get(queue) ?? []).filter((k) => k.message.receivedAt + k.visibilitySeconds * 1000 > now);
  }
}
