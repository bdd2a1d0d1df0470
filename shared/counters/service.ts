/**
 * The counters use-cases behind the HTTP routes and the rollup timer: configure, increment, read,
 * roll up. Wires the stores to the increment, read and rollup code.
 */
import type { TableClient } from '@azure/data-tables';

import type { Clock, Random } from '../clock';
import { type CounterSettings, counterSettings } from './settings';
import { AppError, validationError } from '../errors';
import type { Logger } from '../log';
import { tables } from '../resources';
import { type BackoffPolicy, LostRace, retryLostRaces, retryContextOf } from '../retry';
import { callerKey } from '../idempotency';
import { shareOf } from '../shares';
import { autoCreatedPartition, CappedSet } from '../storage/cappedSet';
import type { Page, PageRequest } from '../storage/list';
import { CounterCatalog, type StoredCounter } from './catalog';
import type { CounterRuntime } from './context';
import { CounterDataStore } from './dataStore';
import { type CounterDefinitionInput, resolveDefinition, sameDefinition, structuralDifferences } from './definition';
import { DirtyIndex, oldestUnfoldedMs } from './dirtyIndex';
import { Incrementer, type IncrementResult } from './increment';
import { HitKeys } from './keys';
import { CounterReader, type CounterValue } from './reader';
import { Rollup, type RollupReport } from './rollup';
import { counterTelemetry, IncrementTally } from './metrics';
import { noTelemetry, type Telemetry } from '../telemetry/port';

export interface CounterTableNames {
  readonly settings: string;
  readonly data: string;
  readonly dirty: string;
}

const defaultCounterTables: CounterTableNames = { settings: tables.counters, data: tables.counterData, dirty: tables.counterDirty };

export interface CounterServiceDeps {
  /** A client for the named table, which exists once the promise resolves. */
  readonly table: (name: string) => Promise<TableClient>;
  readonly tableNames?: CounterTableNames;
  readonly settings: CounterSettings;
  readonly idempotencyTtlSeconds: number;
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: Logger;
  readonly backoff: BackoffPolicy;
  /**
   * Writes per counter one instance keeps under way, increments arriving meanwhile joining the next
   * one (see increment.ts); 0 writes every increment on its own. Default `defaultWritesInFlight`.
   */
  readonly writesInFlight?: number;
  /** Where the capability's metrics go (none when absent). */
  readonly telemetry?: Telemetry;
}

/**
 * Two writes under way per counter and instance: a slow write (a storage retry, a timeout) holds up
 * only the increments it carries while the other slot keeps going; with one slot it would hold up
 * every increment of the counter. Measured with bench/counters (16 and 64 writers): 1 and 2 slots
 * gave the same increments/s, 2 at 0.19 transactions per increment against 0.13 (16 writers); 4
 * slots were slower and dearer (0.32).
 */
const defaultWritesInFlight = 2;

export interface ConfigureResult {
  readonly outcome: 'created' | 'updated' | 'unchanged';
  readonly counter: StoredCounter;
}

function notFound(name: string): AppError {
  return new AppError('NotFound', `No counter named "${name}"; create it with PUT /api/counters/${name}`);
}

/** Dirty-index rows one figures read looks at (the oldest first, so the lag is exact even when cut short). */
const figureRows = 1000;
/** Counter names the figures list at most. */
const figureNames = 20;

export class CounterService {
  readonly catalog: CounterCatalog;
  readonly data: CounterDataStore;
  readonly dirty: DirtyIndex;
  readonly rollup: Rollup;
  private readonly incrementer: Incrementer;
  private readonly reader: CounterReader;
  /** TALLYHO_COUNTERS_MAX_AUTO_CREATED: increments choose names, so auto-creation is capped. */
  private readonly autoCreated: CappedSet;
  private readonly metrics;
  /** Increments acknowledged here, reported when a reader collects: an increment records nothing itself. */
  private readonly increments = new IncrementTally();

  constructor(private readonly deps: CounterServiceDeps) {
    this.metrics = (deps.telemetry ?? noTelemetry).of(counterTelemetry).metrics;
    this.metrics.increments.observe((report) => this.increments.report(report));
    const names = deps.tableNames ?? defaultCounterTables;
    const { clock, random, logger, backoff, settings } = deps;
    const keys = new HitKeys(random);
    this.catalog = new CounterCatalog(() => deps.table(names.settings), clock, settings.settingsCacheSeconds * 1000);
    this.autoCreated = new CappedSet({
      table: () => deps.table(names.settings),
      partitionKey: autoCreatedPartition,
      max: settings.maxAutoCreated,
      noun: 'auto-created counters',
      setting: counterSettings.settings.maxAutoCreated.env,
      retry: retryContextOf(deps, 'the auto-created counter count'),
      // A pool of fair shares (shared/shares.ts): one caller auto-creates at most a quarter (429 past it).
      share: shareOf(settings.maxAutoCreated).share,
    });
    this.data = new CounterDataStore(() => deps.table(names.data));
    this.dirty = new DirtyIndex(() => deps.table(names.dirty), logger);
    const idempotencyTtlMs = deps.idempotencyTtlSeconds * 1000;
    const runtime: CounterRuntime = { data: this.data, dirty: this.dirty, clock, random, logger, backoff, keys };
    const writesInFlight = deps.writesInFlight ?? defaultWritesInFlight;
    this.incrementer = new Incrementer({ ...runtime, idempotencyTtlMs, writesInFlight });
    this.reader = new CounterReader(runtime);
    this.rollup = new Rollup({
      ...runtime,
      catalog: this.catalog,
      defaultSafetyWindowSeconds: settings.defaultSafetyWindowSeconds,
      maxHitsPerPartition: settings.rollupMaxHits,
      sweepEveryMs: idempotencyTtlMs,
    });
  }

  /**
   * Creates the counter, or changes its settings. Omitted settings take their defaults (PUT
   * replaces). Once the counter holds data, `mode` and `partitions` are fixed (409): they decide
   * where its data lives. The safety window may change at any time.
   */
  configure(name: string, input: CounterDefinitionInput): Promise<ConfigureResult> {
    const definition = resolveDefinition(input, this.deps.settings);
    return retryLostRaces(retryContextOf(this.deps, `counter ${name}`), async () => {
      const existing = await this.catalog.read(name);
      if (existing === undefined) {
        const { created, counter } = await this.catalog.create(name, definition);
        if (!created) throw new LostRace(`counter ${name} was created concurrently`);
        return { outcome: 'created', counter };
      }
      if (sameDefinition(existing.definition, definition)) return { outcome: 'unchanged', counter: existing };
      const fields = structuralDifferences(existing.definition, definition);
      if (fields.length > 0 && (await this.data.hasData(name))) {
        throw new AppError('Conflict', `Counter ${name} holds data; its ${fields.join(' and ')} can no longer change`, {
          extra: { fields, current: existing.definition },
        });
      }
      return { outcome: 'updated', counter: await this.catalog.replace(existing, definition) };
    });
  }

  /** `caller`: who increments (a Caller id): a counter it auto-creates takes a place of its share. */
  async increment(name: string, by: number, idempotencyKey?: string, caller?: string): Promise<IncrementResult> {
    const max = this.deps.settings.maxIncrement;
    if (!Number.isSafeInteger(by) || by === 0 || Math.abs(by) > max) {
      throw validationError(`"by" must be a non-zero integer from -${max} to ${max}`, [
        { path: 'body.by', message: `Must be a non-zero integer with |by| <= ${max} (TALLYHO_COUNTERS_MAX_INCREMENT)` },
      ]);
    }
    const counter = await this.counterForIncrement(name, caller);
    const result = await this.incrementer.increment(counter, by, callerKey(idempotencyKey, caller));
    if (!result.replayed) this.increments.add(name, counter.definition.mode);
    return result;
  }

  async read(name: string, consistent = false): Promise<CounterValue> {
    const counter = await this.catalog.read(name);
    if (counter === undefined) throw notFound(name);
    const value = await this.reader.read(counter, consistent);
    this.metrics.pending.record(value.pendingHits, { 'tallyho.counter.name': name });
    return value;
  }

  list(page: PageRequest): Promise<Page<StoredCounter>> {
    return this.catalog.list(page);
  }

  /**
   * How far the rollup is behind, from the dirty index (one query of at most `figureRows` rows, oldest
   * minute first): the lag the rollup's gauge reports, and which counters have hits waiting.
   */
  async figures() {
    const now = this.deps.clock.now();
    const rows = await this.dirty.list(now, figureRows);
    const names = [...new Set(rows.map((r) => r.name))].sort();
    return {
      readAt: new Date(now).toISOString(),
      rollupLagSeconds: oldestUnfoldedMs(rows, now) / 1000,
      oldestUnfoldedAt: rows[0] === undefined ? null : new Date(rows[0].bucket).toISOString(),
      partitionsWaiting: new Set(rows.map((r) => r.partitionKey)).size,
      countersWaiting: names.slice(0, figureNames),
      truncated: rows.length >= figureRows || names.length > figureNames,
    };
  }

  async runRollup(): Promise<RollupReport> {
    const report = await this.rollup.run();
    this.metrics.rollupLag.record(report.oldestUnfoldedMs / 1000);
    this.metrics.folded.add(report.hitsFolded);
    this.metrics.rollupFailures.add(report.failed);
    return report;
  }

  private async counterForIncrement(name: string, caller: string | undefined): Promise<StoredCounter> {
    const counter = await this.catalog.cached(name);
    if (counter !== undefined) return counter;
    if (!this.deps.settings.autoCreate) throw notFound(name);
    await this.autoCreated.admit(name, caller);
    const { created, counter: made } = await this.catalog.create(name, resolveDefinition({}, this.deps.settings));
    if (created) this.deps.logger.log('info', 'counter.auto_created', { counter: name });
    return made;
  }
}
