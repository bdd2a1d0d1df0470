/** The admin use-cases: flush now, remap a type, and the status view of a type. */
import { AppError } from '../errors';
import type { ReaderLevel } from '../http/authorization';
import type { StreamsContext } from './context';
import type { DurableClient } from '../durable/client';
import { depthOfLedger, findReceipt, type LedgerState, type WriterSnapshot } from './ledger';
import { releaseToRoute } from './handoff';
import { logBlobName, parseWriterKey, writerEntity, writerOps } from './names';
import { defaultRoute, routeWriterKey, type StreamRoute } from './route';
import type { FlushRecord, FlushRequest } from './writerState';

export interface RouteView {
  readonly partition: string;
  readonly resource: string;
  readonly version: number;
  readonly source: 'table' | 'default';
}

function routeView(route: StreamRoute): RouteView {
  return { partition: route.partition, resource: route.resource, version: route.version, source: route.source };
}

function notAnswered(what: string, key: string): AppError {
  return new AppError('DependencyUnavailable', `The writer ${key} did not answer the ${what} in time`, { retryAfterSeconds: 1 });
}

export async function flushType(ctx: StreamsContext, durable: DurableClient, type: string) {
  const route = await ctx.resolver.resolve(type);
  const key = routeWriterKey(route);
  const deadline = ctx.clock.now() + ctx.settings.ackTimeoutMs;
  const request: FlushRequest = { requestId: ctx.newId() };
  await durable.signal(writerEntity(key), writerOps.requestFlush, request);
  const receipt = await ctx.watch.wait(durable, key, (ledger) => findReceipt(ledger, request.requestId), deadline);
  if (!receipt.ok) throw notAnswered('flush request', key);
  const last = receipt.value.ok ? receipt.value.last : -1;
  await ctx.flushers.kick(durable, key);
  const done = await ctx.watch.wait(
    durable,
    key,
    (ledger) => {
      const through = ledger.snapshot?.flushedThrough ?? 0;
      return through > last ? through : undefined;
    },
    deadline,
  );
  const flushedThrough = done.ok ? done.value : (done.ledger?.snapshot?.flushedThrough ?? 0);
  return { type, partition: route.partition, resource: route.resource, flushedThrough, flushed: done.ok };
}

function ownsType(snapshot: WriterSnapshot | null | undefined, type: string, version: number): boolean {
  const record = snapshot?.types[type];
  return record !== undefined && record.moved === undefined && record.ready && record.version >= version;
}

/**
 * Points `type` at another partition and/or resource. The row is written first (conditionally),
 * then the old writer is told to release the type; it flushes and hands over to the new writer.
 * Waits (up to TALLYHO_STREAMS_ACK_TIMEOUT_MS) until the new writer owns the type. Repeating the
 * same remap re-drives a handoff that an earlier attempt left unfinished.
 */
export async function remapType(
  ctx: StreamsContext,
  durable: DurableClient,
  type: string,
  target: { readonly partition?: string | undefined; readonly resource?: string | undefined },
) {
  const stored = await ctx.routes.get(type);
  // A remap makes the type's writer: it takes a place under TALLYHO_STREAMS_MAX_TYPES as a first append does.
  if (!ctx.ownTypes.has(type)) await ctx.types.admit(type);
  const current = stored?.route ?? defaultRoute(type, ctx.settings.partitions);
  const to = { partition: target.partition ?? current.partition, resource: target.resource ?? current.resource };
  const unchanged = to.partition === current.partition && to.resource === current.resource;
  let next: StreamRoute = current;
  if (!unchanged) {
    next = {
      type,
      ...to,
      version: current.version + 1,
      source: 'table',
      previous: { partition: current.partition, resource: current.resource, version: current.version },
    };
    if (!(await ctx.routes.put(next, stored?.etag))) {
      throw new AppError('Conflict', `The route of ${type} was changed concurrently; read it and try again`);
    }
    ctx.logger.log('info', 'streams.remapped', { type, from: routeWriterKey(current), to: routeWriterKey(next), version: next.version });
  }
  ctx.resolver.invalidate(type);
  const newKey = routeWriterKey(next);
  await releaseToRoute(ctx, durable, next);
  const switched =
    next.version === 0 ||
    (
      await ctx.watch.wait(
        durable,
        newKey,
        (ledger) => (ownsType(ledger.snapshot, type, next.version) ? true : undefined),
        ctx.clock.now() + ctx.settings.ackTimeoutMs,
      )
    ).ok;
  return { type, from: routeView(current), to: routeView(next), changed: !unchanged, switched };
}

const hiddenError = 'The last flush failed; GET /api/streams/{type}/privileged (admin key) shows why';

function flushView(flush: FlushRecord, reader: ReaderLevel) {
  const { blob, ...rest } = flush;
  return { ...rest, at: iso(flush.at) ?? '', ...(reader === 'admin' ? { blob } : {}) };
}

function iso(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString();
}

function owns(snapshot: WriterSnapshot | null | undefined, route: StreamRoute): 'yes' | 'handingOver' | 'awaitingHandoff' | 'unknown' {
  const record = snapshot?.types[route.type];
  if (record === undefined) return route.version === 0 ? 'unknown' : 'awaitingHandoff';
  if (record.moved !== undefined) return record.moved.version > route.version ? 'handingOver' : 'awaitingHandoff';
  return record.ready && record.version >= route.version ? 'yes' : 'awaitingHandoff';
}

/**
 * A type's route and writer as a reader at `reader` level may see them: a function-level reader
 * gets no blob names (where the logs are is the operator's business, and a blob name is half of a
 * storage URL) and no flush error text (it comes from the storage SDK).
 */
export async function describeType(ctx: StreamsContext, durable: DurableClient, type: string, reader: ReaderLevel) {
  const route = await ctx.resolver.resolve(type);
  const key = routeWriterKey(route);
  const ledger: LedgerState | undefined = await ctx.watch.read(durable, key);
  const snapshot = ledger?.snapshot ?? null;
  const now = ctx.clock.now();
  const cachedUntil = ctx.resolver.cachedUntil(type);
  const depth = depthOfLedger(ledger);
  const cursor = snapshot?.cursor ?? null;
  return {
    type,
    route: { ...routeView(route), cachedForMs: cachedUntil === undefined ? null : Math.max(0, cachedUntil - now) },
    writer: {
      key,
      exists: snapshot !== null,
      owns: owns(snapshot, route),
      accepted: snapshot?.accepted ?? 0,
      flushedThrough: snapshot?.flushedThrough ?? 0,
      bufferDepth: depth,
      inFlight: snapshot?.inflight ?? 0,
      maxBuffered: snapshot?.maxBuffered ?? ctx.settings.maxBuffered,
      bufferedBytes: snapshot?.bufferedBytes ?? 0,
      maxBufferedBytes: snapshot?.maxBufferedBytes ?? ctx.settings.maxBufferedBytes,
      oldestUnflushedAt: depth > 0 ? iso(snapshot?.oldestAt) : null,
      flushLagMs: depth > 0 && snapshot !== null && snapshot.oldestAt !== null ? Math.max(0, now - snapshot.oldestAt) : 0,
      lastFlush: snapshot === null || snapshot.lastFlush === null ? null : flushView(snapshot.lastFlush, reader),
      lastError:
        snapshot === null || snapshot.lastError === null
          ? null
          : { ...snapshot.lastError, at: iso(snapshot.lastError.at) ?? '', ...(reader === 'admin' ? {} : { message: hiddenError }) },
      log:
        cursor === null
          ? null
          : {
              ...(reader === 'admin' ? { container: ctx.container, blob: logBlobName(parseWriterKey(key), cursor.blob) } : {}),
              position: cursor.position,
              blocks: cursor.blocks,
            },
      totals: snapshot?.totals ?? { accepted: 0, duplicates: 0, refusedFull: 0, flushes: 0, bytes: 0 },
    },
  };
}
