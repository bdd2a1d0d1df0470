/**
 * The Durable client for work that runs outside any invocation with a `durableClient` input: the
 * gate watchers' reads (long polls and event streams share one read loop per gate), and a job
 * completion that appends to a stream from a trigger that has no client of its own. Work inside
 * such an invocation takes that invocation's client as a parameter instead.
 *
 * The source keeps the client of the first invocation that offers one. That is enough because a
 * client is only its binding data — task hub, management URLs, the extension's RPC base URL — and
 * the host gives the same binding data to every invocation of the app. Until an invocation has
 * offered one (a fresh instance whose first request is a long poll), `client()` fails with a 503
 * `DependencyUnavailable` that says so; the caller's retry finds it once any Durable-bound function
 * has run on the instance.
 */
import { AppError } from '../errors';
import type { DurableClient } from './client';

export class DurableClientSource {
  private kept: DurableClient | undefined;

  /** Keeps the first client offered; later ones carry the same binding data. */
  offer(client: DurableClient): void {
    this.kept ??= client;
  }

  client(): DurableClient {
    if (this.kept === undefined) {
      throw new AppError(
        'DependencyUnavailable',
        'No Durable client yet: no function with a Durable client binding has run on this instance',
        {
          retryAfterSeconds: 1,
        },
      );
    }
    return this.kept;
  }

  /** The client, or undefined before the first offer (for work that can wait for one). */
  peek(): DurableClient | undefined {
    return this.kept;
  }
}
