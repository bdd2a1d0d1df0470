/**
 * The rollup: for each data partition in the dirty index, fold the hits stamped before
 * `now - safety window` into the partition's total (plan.ts explains why a fold can neither lose
 * nor double-count a hit, whoever races it), then clear the dirty rows it has finished with. Every
 * `TALLYHO_IDEMPOTENCY_TTL_SECONDS` a visited partition's expired idempotency markers are deleted too.
 *
 * Runs may overlap (two instances, a slow run and the next tick): they only cost each other
 * retries. A run that fails half way leaves whole transactions behind and the dirty rows it did not
 * clear, so the next run picks up where it stopped.
 */
import { type AppError, toAppError } from '../errors';
import { retryLostRaces, retryContextOf } from '../retry';
import type { CounterCatalog } from './catalog';
import type { CounterRuntime } from './context';
import { type DirtyRow, oldestUnfoldedMs } from './dirtyIndex';
import { hitsBefore } from './keys';
import { mapLimited } from '../mapLimited';
import { finishedBuckets, planFold } from './plan';
import { applyChange } from './total';

export interface RollupDeps extends CounterRuntime {
  readonly catalog: CounterCatalog;
  /** Safety window for partitions whose counter has no settings row (deleted by hand). */
  readonly defaultSafetyWindowSeconds: number;
  readonly maxHitsPerPartition: number;
  /** Expired markers of a partition are swept at most once per this long. */
  readonly sweepEveryMs: number;
}

export interface RollupReport {
  readonly partitions: number;
  readonly hitsFolded: number;
  readonly transactions: number;
  readonly lostRaces: number;
  readonly markersSwept: number;
  readonly dirtyCleared: number;
  /** Partitions left with foldable hits because of `maxHitsPerPartition`. */
  readonly truncated: number;
  /** Partitions that failed (logged); their dirty rows stay for the next run. */
  readonly failed: number;
  /** Age of the oldest dirty minute this run found, in ms (0: none): how far the rollup is behind. */
  readonly oldestUnfoldedMs: number;
}

interface PartitionOutcome {
  readonly hitsFolded: number;
  readonly transactions: number;
  readonly markersSwept: number;
  readonly truncated: boolean;
}

const dirtyRowsPerRun = 50_000;
const partitionConcurrency = 4;

export class Rollup {
  private lostRaces = 0;

  constructor(private readonly deps: RollupDeps) {}

  async run(): Promise<RollupReport> {
    const now = this.deps.clock.now();
    const rows = await this.deps.dirty.list(now, dirtyRowsPerRun);
    const byPartition = new Map<string, DirtyRow[]>();
    for (const row of rows) byPartition.set(row.partitionKey, [...(byPartition.get(row.partitionKey) ?? []), row]);
    const lostBefore = this.lostRaces;
    const outcomes = await mapLimited([...byPartition.entries()], partitionConcurrency, async ([partitionKey, dirtyRows]) => {
      try {
        return await this.visit(partitionKey, dirtyRows, now);
      } catch (err) {
        const error: AppError = toAppError(err);
        this.deps.logger.log('warn', 'counter.rollup_partition_failed', {
          partition: partitionKey,
          code: error.code,
          error: error.message,
        });
        return undefined;
      }
    });
    const report = {
      partitions: byPartition.size,
      hitsFolded: 0,
      transactions: 0,
      lostRaces: this.lostRaces - lostBefore,
      markersSwept: 0,
      dirtyCleared: 0,
      truncated: 0,
      failed: 0,
      oldestUnfoldedMs: oldestUnfoldedMs(rows, now),
    };
    for (const outcome of outcomes) {
      if (outcome === undefined) {
        report.failed++;
        continue;
      }
      report.hitsFolded += outcome.hitsFolded;
      report.transactions += outcome.transactions;
      report.markersSwept += outcome.markersSwept;
      report.dirtyCleared += outcome.dirtyCleared;
      if (outcome.truncated) report.truncated++;
    }
    if (report.partitions > 0) this.deps.logger.log('info', 'counter.rollup', { ...report });
    return report;
  }

  private async visit(partitionKey: string, rows: readonly DirtyRow[], now: number): Promise<PartitionOutcome & { dirtyCleared: number }> {
    const name = rows[0]?.name ?? '';
    const counter = await this.deps.catalog.cached(name);
    const safetySeconds = counter?.definition.safetyWindowSeconds ?? this.deps.defaultSafetyWindowSeconds;
    const cutoff = now - safetySeconds * 1000;
    const outcome = await this.fold(partitionKey, cutoff, now);
    let dirtyCleared = 0;
    if (!outcome.truncated) {
      const finished = new Set(
        finishedBuckets(
          rows.map((r) => r.bucket),
          cutoff,
        ),
      );
      for (const row of rows) if (finished.has(row.bucket) && (await this.deps.dirty.remove(row))) dirtyCleared++;
    }
    return { ...outcome, dirtyCleared };
  }

  /** Folds the partition's hits stamped before `cutoff`, restarting from a fresh read after a lost race. */
  async fold(partitionKey: string, cutoff: number, now: number): Promise<PartitionOutcome> {
    const { data } = this.deps;
    let hitsFolded = 0;
    let transactions = 0;
    let markersSwept = 0;
    let truncated = false;
    const ctx = retryContextOf(this.deps, `counter partition ${partitionKey}`, () => this.lostRaces++);
    await retryLostRaces(ctx, async () => {
      let total = await data.readTotal(partitionKey);
      const hits = await data.hitsBefore(partitionKey, hitsBefore(cutoff), this.deps.maxHitsPerPartition);
      truncated = hits.length >= this.deps.maxHitsPerPartition;
      let sweptAt: number | undefined;
      if (total.etag !== undefined && (total.sweptAt ?? 0) + this.deps.sweepEveryMs <= now) {
        markersSwept += await data.deleteRows(partitionKey, await data.expiredMarkers(partitionKey, now));
        sweptAt = now;
      }
      const steps = planFold(total.watermark, hits);
      if (steps.length === 0 && sweptAt !== undefined) {
        // Nothing to fold: record the sweep alone, so the next one waits its turn.
        await data.writeTotal(partitionKey, applyChange(total, { delta: 0, opId: this.opId(now), sweptAt }));
        transactions++;
      }
      for (const step of steps) {
        const next = applyChange(total, { delta: step.delta, opId: this.opId(now), watermark: step.watermark, rolledTo: cutoff, sweptAt });
        total = { ...next, etag: await data.fold(partitionKey, step.deletes, next) };
        hitsFolded += step.deletes.length;
        transactions++;
        sweptAt = undefined;
      }
    });
    return { hitsFolded, transactions, markersSwept, truncated };
  }

  private opId(now: number): string {
    return `r${this.deps.keys.next(now)}`;
  }
}
