/**
 * Requests an instance holds open — long polls (a gate's wait) and event streams (a gate's events) —
 * are places among TALLYHO_HTTP_MAX_HELD, fair shares by caller (shared/shares.ts,
 * pre-empting). A caller past its quarter, or a newcomer to a full instance, ends the oldest held
 * request of the largest holder: a long poll answers its "not yet" (as at its timeout) and an event
 * stream ends (its client reconnects), so no request is refused for room and no caller can hold
 * every place. Per instance by nature: a killed instance drops its held requests with their
 * connections, and each instance counts its own.
 */
import { HeldPool, shareOf } from '../shares';

export interface Hold {
  /** Aborted when the place is taken for a fairer share: the request then ends as at its timeout. */
  readonly ended: AbortSignal;
  /** Gives the place back (once; later calls do nothing). */
  release(): void;
}

export class HeldRequests {
  private readonly pool: HeldPool;

  constructor(max: () => number) {
    this.pool = new HeldPool(() => shareOf(max()), 'preempt');
  }

  /** A place for `callerId`'s request; someone's oldest place may end to make room. */
  hold(callerId: string): Hold {
    const ended = new AbortController();
    const admitted = this.pool.admit(callerId, () => ended.abort());
    // A pre-empting pool always admits.
    const release = admitted.ok ? () => admitted.place.release() : () => undefined;
    return { ended: ended.signal, release };
  }

  /** Requests held now, in all or by one caller. */
  held(callerId?: string): number {
    return this.pool.held(callerId);
  }
}

/** The same body, which gives the hold back when it ends, fails or is cancelled (an event stream outlives its handler). */
export function releasedAtEnd(body: ReadableStream<Uint8Array>, hold: Hold): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (!done) return controller.enqueue(value);
        hold.release();
        controller.close();
      } catch (err) {
        hold.release();
        controller.error(err);
      }
    },
    cancel(reason) {
      hold.release();
      return reader.cancel(reason);
    },
  });
}
