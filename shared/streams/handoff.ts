/**
 * Telling the previous writer of a route to release the type to the route's writer. Idempotent
 * (a writer that released already ignores it), so both a remap and a producer that keeps meeting
 * `notReady` can send it: the latter heals a remap whose release was lost with a crashed instance.
 */
import type { StreamsContext } from './context';
import type { DurableClient } from '../durable/client';
import { writerEntity, writerKey, writerOps } from './names';
import { routeWriterKey, type StreamRoute } from './route';
import type { ReleaseRequest } from './writerState';

export async function releaseToRoute(ctx: StreamsContext, durable: DurableClient, route: StreamRoute): Promise<void> {
  const previous = route.previous;
  if (previous === undefined) return;
  const oldKey = writerKey(previous);
  const release: ReleaseRequest = { requestId: ctx.newId(), type: route.type, version: route.version, to: routeWriterKey(route) };
  await durable.signal(writerEntity(oldKey), writerOps.release, release);
  await ctx.flushers.kick(durable, oldKey);
}
