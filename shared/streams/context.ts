/** What the streams use-cases share within a process: settings, resolver, routes, watchers, clock. */
import type { Clock, Random } from '../clock';
import type { StreamSettings } from './settings';
import type { Logger } from '../log';
import type { CappedSet } from '../storage/cappedSet';
import type { AppendCoalescer } from './appendCoalescer';
import type { FlusherControl } from './flusherControl';
import type { LedgerWatch } from './ledgerWatch';
import type { RouteResolver } from './resolver';
import type { RouteTable } from './routeTable';
import type { WriterLimits } from './writerState';
import { noTelemetry, type Telemetry } from '../telemetry/port';
import { streamTelemetry } from './metrics';

export interface StreamsContext {
  readonly settings: StreamSettings;
  readonly resolver: RouteResolver;
  readonly routes: RouteTable;
  /**
   * The distinct types admitted so far (TALLYHO_STREAMS_MAX_TYPES); a new type is admitted before its
   * writer is touched (on its first append, or its first remap). Operators list types from it.
   */
  readonly types: Pick<CappedSet, 'admit' | 'list'>;
  /**
   * Types only the app appends to (the billing ledger): HTTP callers are refused, so nobody can
   * forge a line or spend its producers' sequence numbers, and they take no place under the cap,
   * so callers filling it cannot stop the app's own writes.
   */
  readonly ownTypes: ReadonlySet<string>;
  readonly watch: LedgerWatch;
  readonly appends: AppendCoalescer;
  readonly flushers: FlusherControl;
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: Logger;
  readonly newId: () => string;
  /** Blob container of the logs (for the status view). */
  readonly container: string;
  /** Where the capability's metrics go (none when absent). */
  readonly telemetry?: Telemetry;
}

/** The capability's instruments. */
export function streamsTelemetry(ctx: Pick<StreamsContext, 'telemetry'>) {
  return (ctx.telemetry ?? noTelemetry).of(streamTelemetry);
}

export function writerLimits(settings: StreamSettings): WriterLimits {
  return {
    flushEvents: settings.flushEvents,
    flushIntervalMs: settings.flushIntervalMs,
    flushMaxEvents: settings.flushMaxEvents,
    maxBuffered: settings.maxBuffered,
    maxBufferedBytes: settings.maxBufferedBytes,
    maxProducers: settings.maxProducers,
    maxProducersPerCaller: settings.maxProducersPerCaller,
    dedupWindowMs: settings.dedupWindowSeconds * 1000,
    maxBlockBytes: settings.maxBlockBytes,
    maxBlocksPerBlob: settings.maxBlocksPerBlob,
    idleRecheckMs: settings.idleRecheckSeconds * 1000,
  };
}
