/**
 * Messages the lease hub received for a request that was gone by the time they came (its place went
 * to a fairer share while the receive was under way: ./leaseHub.ts), kept per queue for the next
 * request instead of left to come back when their invisibility ends — which would cost their items an
 * attempt for nothing (the dequeue count is the attempt). This instance's memory only: a kill loses
 * them, and they come back as a killed worker's batch does.
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
   * A kept message of `queue` for a request whose lease is `leaseSeconds` long: hidden at least that
   * long (else another worker could lease it while this one held it), with at least half of that
   * lease left (a lease begins at its message's receive); undefined when there is none.
   */
  take(queue: string, leaseSeconds: number): M | undefined {
    const list = this.live(queue);
    const now = this.clock.now();
    const at = list.findIndex((k) => k.visibilitySeconds >= leaseSeconds && k.message.receivedAt + leaseSeconds * 500 > now);
    const [taken] = at < 0 ? [] : list.splice(at, 1);
    if (list.length === 0) this.byQueue.delete(queue);
    else this.byQueue.set(queue, list);
    return taken?.message;
  }

  /** The kept messages of `queue` still hidden (the others are back in their queue). */
  private live(queue: string): Kept<M>[] {
    const now = this.clock.now();
    return (this.byQueue.get(queue) ?? []).filter((k) => k.message.receivedAt + k.visibilitySeconds * 1000 > now);
  }
}
