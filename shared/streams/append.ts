/**
 * Appending events: resolve the type's writer, signal the append, and wait for the writer's receipt
 * in its ledger (and, for `ack=flushed`, for its flushed-through mark to pass the request's last
 * event). Refusals are handled here: `notOwner` re-resolves (the type was remapped), `notReady`
 * waits for the handoff, `full` is back-pressure (429, or waiting with `wait=true`).
 *
 * Retrying a whole request is always safe: the writer ignores events whose producer sequence number
 * it has accepted before, so a producer that got no answer sends the same events again.
 */
import { AppError } from '../errors';
import { backoffDelay } from '../retry';
import type { StreamsContext } from './context';
import { streamsTelemetry, writerLimits } from './context';
import type { DurableClient } from '../durable/client';
import { releaseToRoute } from './handoff';
import { findReceipt, flushOverdue, type LedgerState } from './ledger';
import { routeWriterKey, type StreamRoute } from './route';
import type { AckMode, StreamEventInput } from './schemas';
import type { AppendRequest, Receipt } from './writerState';
import { traceparentOf } from '../telemetry/traceContext';

export interface AppendOptions {
  readonly ack?: AckMode;
  /** Wait for room when the buffer is full (bounded by TALLYHO_STREAMS_MAX_WAIT_SECONDS) instead of failing with 429. */
  readonly wait?: boolean;
  /** Who is appending (its Caller id, shared/identity/caller.ts), for TALLYHO_STREAMS_MAX_PRODUCERS_PER_CALLER; absent for the app itself. */
  readonly caller?: string;
}

export interface AppendResult {
  readonly type: string;
  readonly partition: string;
  readonly resource: string;
  readonly requestId: string;
  readonly accepted: number;
  readonly duplicates: number;
  readonly lastIndex: number;
  readonly ack: AckMode;
  readonly flushed: boolean;
}

type Accepted = Extract<Receipt, { ok: true }>;

const reroutes = 5;
const refusalBackoff = { baseMs: 20, maxDelayMs: 500, maxAttempts: 1000, maxElapsedMs: 600_000 };

/** Signals the writer and waits for its receipt. */
async function send(
  ctx: StreamsContext,
  durable: DurableClient,
  route: StreamRoute,
  events: readonly StreamEventInput[],
  deadline: number,
  caller: string | undefined,
): Promise<{ receipt: Receipt; ledger: LedgerState | undefined; requestId: string }> {
  const key = routeWriterKey(route);
  // The append span's: the writer keeps it with the events, and their flush links it.
  const traceparent = traceparentOf();
  const request: AppendRequest = {
    requestId: ctx.newId(),
    type: route.type,
    version: route.version,
    at: ctx.clock.now(),
    limits: writerLimits(ctx.settings),
    events,
    // Callers are refused on the app's own types before this, so such an append is the app's.
    ...(ctx.ownTypes.has(route.type) ? { own: true as const } : {}),
    ...(caller === undefined ? {} : { caller }),
    ...(traceparent === undefined ? {} : { tp: traceparent }),
  };
  await ctx.appends.send(durable, key, request);
  let seen: LedgerState | undefined;
  const result = await ctx.watch.wait(
    durable,
    key,
    (ledger) => {
      seen = ledger;
      return findReceipt(ledger, request.requestId);
    },
    deadline,
  );
  if (!result.ok) {
    throw new AppError(
      'DependencyUnavailable',
      `The writer of ${route.type} did not answer in time; sending the same events again is safe`,
      {
        retryAfterSeconds: 1,
        extra: { writer: key, requestId: request.requestId },
      },
    );
  }
  return { receipt: result.value, ledger: seen, requestId: request.requestId };
}

/**
 * The writer's answer in the metrics: accepted and duplicate events. The buffer's depth is not
 * recorded here: the depth gauge reads each writer's ledger when it is collected (depthGauge.ts).
 */
function noteAccepted(ctx: StreamsContext, route: StreamRoute, receipt: Accepted): void {
  const { metrics } = streamsTelemetry(ctx);
  const type = { 'tallyho.stream.partition': route.partition, 'tallyho.stream.type': route.type };
  metrics.accepted.add(receipt.acc, type);
  metrics.duplicates.add(receipt.dup, type);
}

async function waitFlushed(ctx: StreamsContext, durable: DurableClient, key: string, last: number, deadline: number): Promise<boolean> {
  if (last < 0) return true;
  const result = await ctx.watch.wait(
    durable,
    key,
    (ledger) => ((ledger.snapshot?.flushedThrough ?? 0) > last ? true : undefined),
    deadline,
  );
  return result.ok;
}

/** Where an append stands between attempts: reroutes so far, whether a stuck remap was redriven, and its time limits. */
interface Attempts {
  rerouted: number;
  redriven: boolean;
  /** The last moment to answer (TALLYHO_STREAMS_ACK_TIMEOUT_MS from the start). */
  readonly deadline: number;
  /** How long a full buffer is waited on: the start (answer 429 at once) or `?wait=true`'s limit. */
  readonly waitUntil: number;
}

/** An accepted append: the flusher woken if it should be, the acceptance counted and, for `ack=flushed`, the flush waited for. */
async function answerAccepted(
  ctx: StreamsContext,
  durable: DurableClient,
  route: StreamRoute,
  sent: Awaited<ReturnType<typeof send>> & { readonly receipt: Accepted },
  ack: AckMode,
  answerBy: number,
): Promise<AppendResult> {
  const { receipt: accepted, ledger, requestId } = sent;
  const key = routeWriterKey(route);
  if (accepted.restart === true) await ctx.flushers.restart(durable, key);
  else if (accepted.kick || flushOverdue(ledger, ctx.clock.now())) await ctx.flushers.kick(durable, key);
  noteAccepted(ctx, route, accepted);
  let flushed = accepted.last < 0 || (ledger?.snapshot?.flushedThrough ?? 0) > accepted.last;
  if (ack === 'flushed' && !flushed) {
    flushed = await waitFlushed(ctx, durable, key, accepted.last, answerBy);
    if (!flushed) {
      throw new AppError('DependencyUnavailable', `The events of ${route.type} are buffered (durable) but were not flushed in time`, {
        retryAfterSeconds: 1,
        extra: { buffered: true, requestId, lastIndex: accepted.last },
      });
    }
  }
  return {
    type: route.type,
    partition: route.partition,
    resource: route.resource,
    requestId,
    accepted: accepted.acc,
    duplicates: accepted.dup,
    lastIndex: accepted.last,
    ack,
    flushed,
  };
}

/** A refused append: throws the answer the refusal is, or (after a wait, for some) returns for the next attempt. */
async function afterRefusal(
  ctx: StreamsContext,
  durable: DurableClient,
  route: StreamRoute,
  why: Extract<Receipt, { ok: false }>['why'],
  attempt: number,
  at: Attempts,
): Promise<void> {
  const { type } = route;
  const now = ctx.clock.now();
  const delay = backoffDelay(attempt, refusalBackoff, ctx.random);
  switch (why) {
    case 'notOwner':
      // Our route is older than the writer's knowledge: the type moved. Resolve again.
      ctx.resolver.invalidate(type);
      if (++at.rerouted > reroutes) {
        throw new AppError('DependencyUnavailable', `The route of ${type} keeps changing; try again`, { retryAfterSeconds: 1 });
      }
      return;
    case 'notReady':
      // A remap towards this writer is under way; the handoff arrives once the old writer flushed.
      if (!at.redriven) {
        at.redriven = true;
        await releaseToRoute(ctx, durable, route);
      }
      ctx.resolver.invalidate(type);
      if (now + delay >= at.deadline) {
        throw new AppError('DependencyUnavailable', `${type} is being remapped; try again shortly`, { retryAfterSeconds: 1 });
      }
      await ctx.clock.sleep(delay);
      return;
    case 'producers':
      // Every remembered producer was active within the dedup window: none may be forgotten yet.
      throw new AppError(
        'TooManyRequests',
        `${type}'s writer already remembers TALLYHO_STREAMS_MAX_PRODUCERS producers active within the dedup window; a new producer must wait`,
        { retryAfterSeconds: Math.min(60, ctx.settings.dedupWindowSeconds) },
      );
    case 'callerProducers':
      // This caller holds its share of the writer's producers: others keep theirs.
      throw new AppError(
        'TooManyRequests',
        `You already hold TALLYHO_STREAMS_MAX_PRODUCERS_PER_CALLER producers of ${type}'s writer active within the dedup window; a new producer of yours must wait`,
        { retryAfterSeconds: Math.min(60, ctx.settings.dedupWindowSeconds) },
      );
    case 'full':
      await ctx.flushers.kick(durable, routeWriterKey(route));
      if (now + delay >= at.waitUntil) {
        throw new AppError(
          'TooManyRequests',
          `The buffer of ${type} is full (TALLYHO_STREAMS_MAX_BUFFERED events or _MAX_BUFFERED_BYTES); retry after Retry-After`,
          {
            retryAfterSeconds: Math.max(1, Math.ceil(ctx.settings.flushIntervalMs / 1000)),
          },
        );
      }
      await ctx.clock.sleep(delay);
      return;
  }
}

/** Appends in its own span (producer), which the events' flush links. */
export function appendEvents(
  ctx: StreamsContext,
  durable: DurableClient,
  type: string,
  events: readonly StreamEventInput[],
  options: AppendOptions = {},
): Promise<AppendResult> {
  return streamsTelemetry(ctx).spans.append.run({ attributes: { 'tallyho.stream.type': type } }, (span) =>
    appendTraced(ctx, durable, type, events, options, (partition) => span.setAttributes({ 'tallyho.stream.partition': partition })),
  );
}

async function appendTraced(
  ctx: StreamsContext,
  durable: DurableClient,
  type: string,
  events: readonly StreamEventInput[],
  options: AppendOptions,
  routed: (partition: string) => void,
): Promise<AppendResult> {
  const ack = options.ack ?? 'buffered';
  const started = ctx.clock.now();
  const at: Attempts = {
    rerouted: 0,
    redriven: false,
    deadline: started + ctx.settings.ackTimeoutMs,
    waitUntil: options.wait === true ? started + ctx.settings.maxWaitSeconds * 1000 : started,
  };
  for (let attempt = 0; ; attempt++) {
    const route = await ctx.resolver.resolve(type);
    routed(route.partition);
    // A type an operator routed is admitted by that, and the app's own by the app; any other must
    // take a place before a writer exists for it.
    if (route.source === 'default' && !ctx.ownTypes.has(type)) await ctx.types.admit(type);
    // Each attempt gets the full answer timeout; the loop itself is bounded by `deadline` and `waitUntil`.
    const answerBy = ctx.clock.now() + ctx.settings.ackTimeoutMs;
    const sent = await send(ctx, durable, route, events, answerBy, options.caller);
    const { receipt } = sent;
    if (receipt.ok) return answerAccepted(ctx, durable, route, { ...sent, receipt }, ack, answerBy);
    await afterRefusal(ctx, durable, route, receipt.why, attempt, at);
  }
}
