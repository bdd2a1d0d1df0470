/**
 * The sequences use-cases behind the HTTP routes: create/configure, take numbers (idempotently),
 * describe, validate. One allocator per sequence per process, opened on first use and closed on
 * shutdown so unused numbers go back to storage.
 */
import type { Clock, Random } from '../clock';
import { sequenceSettings } from './settings';
import { AppError } from '../errors';
import { callerKey, type IdempotencyStore } from '../idempotency';
import type { Logger } from '../log';
import { type BackoffPolicy, retryContextOf } from '../retry';
import { shareOf } from '../shares';
import { autoCreatedPartition, CappedSet } from '../storage/cappedSet';
import type { Page, PageRequest } from '../storage/list';
import { type AllocatorStats, type CloseReport, SequenceAllocator } from './allocator';
import {
  defaultDefinition,
  definitionDifferences,
  resolveDefinition,
  type SequenceDefinition,
  type SequenceSettingsInput,
} from './definition';
import { formatNumber, type ValidationOutcome, validateFormatted } from './format';
import type { SequenceStore, StoredSequence } from './store';
import { sequenceTelemetry } from './metrics';
import { noTelemetry, type Telemetry } from '../telemetry/port';

export interface SequenceServiceDeps {
  readonly store: SequenceStore;
  readonly idempotency: IdempotencyStore;
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: Logger;
  readonly backoff: BackoffPolicy;
  /** Create unknown sequences with the default settings on first `next` instead of a 404. */
  readonly autoCreate: boolean;
  /** TALLYHO_SEQUENCES_MAX_AUTO_CREATED: `next` lets a caller choose a new name, so auto-creation is capped. */
  readonly maxAutoCreated: number;
  /** Unique per process; allocators derive their write tokens from it. */
  readonly instanceId: string;
  /** Where the capability's metrics go (none when absent). */
  readonly telemetry?: Telemetry;
}

export interface SequenceView {
  readonly sequence: string;
  readonly settings: SequenceDefinition;
  /** The first number no instance has reserved yet. */
  readonly highWaterMark: number;
  /** This instance's allocator, or null when it has not issued from this sequence. */
  readonly instance: AllocatorStats | null;
}

export interface NextResult {
  readonly sequence: string;
  readonly numbers: number[];
  readonly formatted: string[];
}

function notFound(name: string): AppError {
  return new AppError('NotFound', `No sequence named "${name}"; create it with PUT /api/sequences/${name}`);
}

export class SequenceService {
  private readonly allocators = new Map<string, Promise<SequenceAllocator>>();
  private readonly opened = new Map<string, SequenceAllocator>();

  private readonly autoCreated: CappedSet;
  private readonly metrics;

  constructor(private readonly deps: SequenceServiceDeps) {
    this.metrics = (deps.telemetry ?? noTelemetry).of(sequenceTelemetry).metrics;
    // Read from the allocators' own tallies when a reader collects: taking a number records nothing.
    const tally =
      (count: (stats: AllocatorStats) => number) => (report: (value: number, a: { 'tallyho.sequence.name': string }) => void) => {
        for (const allocator of this.opened.values()) report(count(allocator.stats()), { 'tallyho.sequence.name': allocator.name });
      };
    this.metrics.issued.observe(tally((s) => s.issued));
    this.metrics.reservations.observe(tally((s) => s.refills));
    this.metrics.retries.observe(tally((s) => s.retries412));
    this.autoCreated = new CappedSet({
      table: deps.store.table,
      partitionKey: autoCreatedPartition,
      max: deps.maxAutoCreated,
      noun: 'auto-created sequences',
      setting: sequenceSettings.settings.maxAutoCreated.env,
      retry: retryContextOf(deps, 'the auto-created sequence count'),
      // A pool of fair shares (shared/shares.ts): one caller auto-creates at most a quarter (429 past it).
      share: shareOf(deps.maxAutoCreated).share,
    });
  }

  async configure(name: string, input: SequenceSettingsInput): Promise<{ created: boolean; view: SequenceView }> {
    const existing = await this.deps.store.read(name);
    const { created, sequence } =
      existing === undefined ? await this.deps.store.create(name, resolveDefinition(input)) : { created: false, sequence: existing };
    if (!created) {
      const differences = definitionDifferences(sequence.definition, input);
      if (differences.length > 0) {
        throw new AppError('Conflict', `Sequence ${name} exists with different settings: ${differences.map((d) => d.field).join(', ')}`, {
          extra: { differences },
        });
      }
    }
    return { created, view: this.view(sequence) };
  }

  /** `caller`: who asks (a Caller id): a sequence it auto-creates takes a place of its share. */
  async next(name: string, count: number, idempotencyKey?: string, caller?: string): Promise<NextResult> {
    const result = await this.deps.idempotency.run(`sequences:${name}`, callerKey(idempotencyKey, caller), async () => {
      const allocator = await this.allocator(name, caller);
      const numbers = await allocator.take(count);
      // Settings never change after creation, so the allocator's copy is the one to format with.
      return { sequence: name, numbers, formatted: numbers.map((n) => formatNumber(allocator.definition, n)) };
    });
    if (result.numbers.length !== count) {
      throw new AppError('Conflict', `Idempotency-Key was first used for ${result.numbers.length} numbers, not ${count}`, {
        extra: { firstCount: result.numbers.length },
      });
    }
    return result;
  }

  async describe(name: string): Promise<SequenceView> {
    const sequence = await this.deps.store.read(name);
    if (sequence === undefined) throw notFound(name);
    return this.view(sequence);
  }

  async list(page: PageRequest): Promise<Page<SequenceView>> {
    const listing = await this.deps.store.list(page);
    return { ...listing, items: listing.items.map((s) => this.view(s)) };
  }

  async validate(name: string, formatted: string): Promise<ValidationOutcome> {
    const sequence = await this.deps.store.read(name);
    if (sequence === undefined) throw notFound(name);
    return validateFormatted(sequence.definition, formatted);
  }

  /** Closes every allocator, returning unused tails where possible. */
  async shutdown(): Promise<CloseReport[]> {
    const allocators = [...this.opened.values()];
    this.allocators.clear();
    this.opened.clear();
    return Promise.all(allocators.map((a) => a.close()));
  }

  private view(sequence: StoredSequence): SequenceView {
    return {
      sequence: sequence.name,
      settings: sequence.definition,
      highWaterMark: sequence.next,
      instance: this.opened.get(sequence.name)?.stats() ?? null,
    };
  }

  private allocator(name: string, caller?: string): Promise<SequenceAllocator> {
    let allocator = this.allocators.get(name);
    if (allocator === undefined) {
      allocator = this.open(name, caller);
      this.allocators.set(name, allocator);
      // A sequence that does not exist yet may be created later: do not remember the failure.
      void allocator.catch(() => this.allocators.delete(name));
    }
    return allocator;
  }

  private async open(name: string, caller: string | undefined): Promise<SequenceAllocator> {
    let sequence = await this.deps.store.read(name);
    if (sequence === undefined) {
      if (!this.deps.autoCreate) throw notFound(name);
      await this.autoCreated.admit(name, caller);
      ({ sequence } = await this.deps.store.create(name, defaultDefinition));
      this.deps.logger.log('info', 'sequence.auto_created', { sequence: name });
    }
    const allocator = new SequenceAllocator({
      store: this.deps.store,
      sequence,
      clock: this.deps.clock,
      random: this.deps.random,
      logger: this.deps.logger,
      backoff: this.deps.backoff,
      instanceId: this.deps.instanceId,
      onReservation: (ms, reserved) =>
        this.metrics.reservationDuration.record(ms / 1000, {
          'tallyho.sequence.name': name,
          'tallyho.outcome': reserved ? 'reserved' : 'failed',
        }),
    });
    this.opened.set(name, allocator);
    return allocator;
  }
}
