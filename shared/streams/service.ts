/**
 * The streams use-cases behind one object, for HTTP handlers and for other capabilities (jobs
 * writes its invoice lines through `appendOwn`). Each call takes the Durable client of the
 * invocation it runs in; everything else is shared per process.
 */
import { AppError } from '../errors';
import type { ReaderLevel } from '../http/authorization';
import { isReservedName } from '../names';
import { type AppendOptions, type AppendResult, appendEvents } from './append';
import { describeType, flushType, remapType } from './admin';
import type { StreamsContext } from './context';
import type { DurableClient } from '../durable/client';
import type { Page, PageRequest } from '../storage/list';
import { defaultRoute, type StreamRoute } from './route';
import type { StreamEventInput } from './schemas';
import type { DepthReads } from './depthGauge';
import { type SweepDeps, type SweepResult, sweepWriters, writerKeys } from './sweep';
import { validateBatch } from './validate';

export class StreamService {
  constructor(readonly context: StreamsContext) {}

  /**
   * Appends events of one type for a caller (validated here too, so in-process callers get the same
   * 400 rules); the app's own types are refused with 403. `ack: 'buffered'` resolves once they are
   * in the writer's durable state, `'flushed'` once they are in the log blob. An own type is matched
   * as the stores may match it (shared/names.ts `isReservedName`): `Billing-Invoices` is refused too.
   */
  async appendEvents(durable: DurableClient, type: string, events: readonly unknown[], options: AppendOptions = {}): Promise<AppendResult> {
    if (isReservedName(type, this.context.ownTypes)) {
      throw new AppError('Forbidden', `Only the app appends to ${type}: it is the app's own stream (TALLYHO_BILLING_LEDGER_STREAM)`);
    }
    return this.appendOwn(durable, type, events, options);
  }

  /** Appends for the app itself (another capability): its own types are open to it, and any other. */
  async appendOwn(durable: DurableClient, type: string, events: readonly unknown[], options: AppendOptions = {}): Promise<AppendResult> {
    const valid: StreamEventInput[] = validateBatch(type, events, this.context.settings);
    return appendEvents(this.context, durable, type, valid, options);
  }

  flush(durable: DurableClient, type: string) {
    return flushType(this.context, durable, type);
  }

  remap(durable: DurableClient, type: string, target: { partition?: string | undefined; resource?: string | undefined }) {
    return remapType(this.context, durable, type, target);
  }

  /**
   * Every type callers wrote to or an operator remapped, in type order, each with its route: its own
   * (remapped) or the default. One read of the admitted types, one of the route rows in that range.
   */
  async routes(page: PageRequest): Promise<Page<StreamRoute>> {
    const types = await this.context.types.list(page, 'streams');
    const first = types.items[0];
    const last = types.items[types.items.length - 1];
    if (first === undefined || last === undefined) return { ...types, items: [] };
    const { routes, unreadable } = await this.context.routes.within(first, last);
    const broken = new Set(unreadable.map((u) => u.name));
    const { partitions } = this.context.settings;
    return {
      ...types,
      items: types.items.filter((type) => !broken.has(type)).map((type) => routes.get(type) ?? defaultRoute(type, partitions)),
      unreadable: [...types.unreadable, ...unreadable.filter((u) => types.items.includes(u.name))],
    };
  }

  describe(durable: DurableClient, type: string, reader: ReaderLevel) {
    return describeType(this.context, durable, type, reader);
  }

  /** Where the writers the app knows are listed from: the admitted types' routes and the app's own types'. */
  private writerRoutes(): Pick<SweepDeps, 'routes' | 'ownRoutes'> {
    const ctx = this.context;
    return {
      routes: (page) => this.routes(page),
      ownRoutes: () => Promise.all([...ctx.ownTypes].map((type) => ctx.resolver.resolve(type))),
    };
  }

  /** The depth gauge's reads on `durable` (depthGauge.ts): the sweep's writer list, each writer's ledger. */
  depthReads(durable: DurableClient): DepthReads {
    return { writers: () => writerKeys(this.writerRoutes()), readLedger: (key) => this.context.watch.read(durable, key) };
  }

  /** Wakes the flusher of every writer whose flush is overdue, whether or not anyone appends (sweep.ts). */
  async sweep(durable: DurableClient): Promise<SweepResult> {
    const ctx = this.context;
    const result = await sweepWriters({
      ...this.writerRoutes(),
      readLedger: (key) => ctx.watch.read(durable, key),
      kick: (key) => ctx.flushers.kick(durable, key),
      now: () => ctx.clock.now(),
    });
    if (result.kicked.length > 0) ctx.logger.log('warn', 'streams.flush_overdue', { writers: result.writers, kicked: result.kicked });
    return result;
  }
}

/** `appendEvents(type, events, ack)` bound to one invocation's Durable client. */
export interface StreamsApi {
  appendEvents(type: string, events: readonly unknown[], ack?: AppendOptions['ack']): Promise<AppendResult>;
}

export function streamsApi(service: StreamService, durable: DurableClient): StreamsApi {
  return { appendEvents: (type, events, ack = 'buffered') => service.appendOwn(durable, type, events, { ack }) };
}
