/**
 * Counters: increments per second on one hot counter, against a single-entity ETag counter
 * measured in the same run on the same Azurite (started here):
 *   baseline — one entity: read, add, conditional write, retry on 412 (`sharded` with 1 shard, every
 *              increment its own write);
 *   sharded  — 16 shard entities, each such an ETag increment;
 *   hits     — one inserted row per write over 4 partitions (the default), folded by the rollup.
 * `sharded` and `hits` run as shipped (group commit: increments arriving while a write of the counter
 * is under way join the next one) and "uncoalesced" (every increment its own write, as before).
 * For 1, 16 and 64 concurrent writers (one service, as in one instance; each writer yields between
 * increments, as separate requests would): increments/s, failures (503 after the retry budget),
 * latency, and storage transactions per increment — the rollup that folds the window's hits
 * included, for `hits`. Then what metrics cost: the shipped variants with metrics on against off in
 * alternating pairs of short windows (median ratio and its interquartile range), and the CPU one
 * increment's recording takes. Then the read latency of a counter with 0 to 5,000 hits pending,
 * default and consistent read, and after a rollup. Every phase runs for a fixed window, so the run is
 * bounded.
 */
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';

import { startAzurite } from '../devhost/azurite';
import { systemClock } from '../shared/clock';
import { loadAppConfig as loadConfig } from '../shared/app/settings';
import { readGroup } from '../shared/config';
import { counterSettings } from '../shared/counters/settings';
import type { CounterMode } from '../shared/counters/definition';
import { CounterService } from '../shared/counters/service';
import { silentLogger } from '../shared/log';
import { defaultBackoff } from '../shared/retry';
import { createStorageClients } from '../shared/storage/clients';
import { IncrementTally } from '../shared/counters/metrics';
import { alternate, describeMetricsOn, metricsOn, metricsOnly, nsPerCall, onOffRatios, type Pairs, type Side } from './support/metricsOn';
import { fmt, header, Latency, ratio, type Row, table } from './support/report';

const writerCounts = [1, 16, 64];
/** Each variant runs `rounds` windows of `windowMs` per writer count. */
const windowMs = 900;
const rounds = 3;
const pendingCounts = [0, 100, 1000, 5000];
const readsPerPoint = 40;

interface Variant {
  readonly label: string;
  readonly mode: CounterMode;
  readonly partitions: number;
  /** Group commit off (one write per increment) or as shipped. */
  readonly coalesce: boolean;
}

/** Counter names recorded as metric attributes in the "on" runs: all (the costlier path an operator can choose). */
const metricsPolicy = { callerNames: ['*'], maxNames: 100 };

const variants: readonly Variant[] = [
  { label: 'baseline (1 entity, ETag)', mode: 'sharded', partitions: 1, coalesce: false },
  { label: 'sharded (16 shards), uncoalesced', mode: 'sharded', partitions: 16, coalesce: false },
  { label: 'hits (4 partitions), uncoalesced', mode: 'hits', partitions: 4, coalesce: false },
  { label: 'sharded (16 shards)', mode: 'sharded', partitions: 16, coalesce: true },
  { label: 'hits (4 partitions)', mode: 'hits', partitions: 4, coalesce: true },
];

/**
 * The metrics overhead: each shipped variant with metrics on against off, in many short pairs of
 * windows (bench/support/metricsOn.ts `alternate`): a pair's ratio is taken within a second, so
 * load drifting on this shared machine does not tilt it.
 */
const overheadVariants = [variants[3]!, variants[4]!];
const overheadRounds = 30;
const overheadWindowMs = 400;

let transactions = 0;
let counterSeq = 0;

/** What windows of increments on one counter added up to. */
interface Tally {
  readonly latency: Latency;
  done: number;
  failed: number;
  seconds: number;
}

function tally(): Tally {
  return { latency: new Latency(), done: 0, failed: 0, seconds: 0 };
}

/** `writers` loops incrementing `name` for `ms` (each yielding between increments, as separate requests would); answers how many succeeded. */
async function writeWindow(writer: CounterService, name: string, writers: number, ms: number, into: Tally): Promise<number> {
  const started = performance.now();
  const doneBefore = into.done;
  const end = started + ms;
  await Promise.all(
    Array.from({ length: writers }, async () => {
      while (performance.now() < end) {
        const t = performance.now();
        try {
          await writer.increment(name, 1);
          into.done++;
          into.latency.recordMs(performance.now() - t);
        } catch {
          into.failed++;
        }
        await nextTurn();
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  into.seconds += seconds;
  return into.done - doneBefore;
}

async function main(): Promise<void> {
  header('counters');
  const azurite = await startAzurite();
  const on = metricsOn(metricsPolicy);
  try {
    const config = loadConfig({ AzureWebJobsStorage: azurite.connectionString });
    const storage = createStorageClients(config.storage, {
      retry: config.storageRetry,
      observe: (service) => {
        if (service === 'table') transactions++;
      },
    });
    const serviceWith = (writesInFlight?: number, metered = false): CounterService =>
      new CounterService({
        table: (name) => storage.table(name),
        settings: { ...readGroup(counterSettings, {}), settingsCacheSeconds: 3600 },
        idempotencyTtlSeconds: 3600,
        clock: systemClock,
        random: Math.random,
        logger: silentLogger,
        backoff: defaultBackoff,
        ...(writesInFlight === undefined ? {} : { writesInFlight }),
        ...(metered ? { telemetry: on.telemetry } : {}),
      });
    // Same tables, same storage clients: one shipped service, one writing every increment on its own.
    const service = serviceWith();
    const uncoalesced = serviceWith(0);
    const metered = serviceWith(undefined, true);
    const fresh = async (variant: Pick<Variant, 'mode' | 'partitions'>): Promise<string> => {
      const name = `c${++counterSeq}`;
      await service.configure(name, { mode: variant.mode, partitions: variant.partitions, safetyWindowSeconds: 0 });
      await service.increment(name, 1);
      return name;
    };

    interface Phase extends Tally {
      readonly name: string;
      writeTransactions: number;
    }
    const phases = new Map<string, Phase>();
    const phaseOf = async (variant: Variant, writers: number): Promise<Phase> => {
      const id = `${variant.label}/${writers}`;
      let phase = phases.get(id);
      if (phase === undefined) {
        phase = { name: await fresh(variant), ...tally(), writeTransactions: 0 };
        phases.set(id, phase);
      }
      return phase;
    };
    // Variants take turns in short windows (rotating who goes first), so load from other processes on
    // this machine falls on all of them alike instead of on whichever ran during a busy spell.
    const runWindows = async (list: readonly Variant[], roundsOf: number): Promise<void> => {
      for (const writers of writerCounts) {
        for (let round = 0; round < roundsOf; round++) {
          for (let v = 0; v < list.length; v++) {
            const variant = list[(v + round) % list.length]!;
            const phase = await phaseOf(variant, writers);
            const before = transactions;
            await writeWindow(variant.coalesce ? service : uncoalesced, phase.name, writers, windowMs, phase);
            phase.writeTransactions += transactions - before;
          }
        }
      }
    };
    if (!metricsOnly) await runWindows(variants, rounds);

    // Metrics on against off: per writer count and variant, a counter for each side, a warm-up
    // window each, then the pairs.
    const overhead: {
      variant: Variant;
      writers: number;
      pairs: Pairs;
      sides: Record<Side, Tally & { name: string }>;
    }[] = [];
    for (const writers of writerCounts) {
      for (const variant of overheadVariants) {
        const sides = { off: { name: await fresh(variant), ...tally() }, on: { name: await fresh(variant), ...tally() } };
        const writer = { off: service, on: metered };
        for (const side of ['off', 'on'] as const) await writeWindow(writer[side], sides[side].name, writers, overheadWindowMs, tally());
        const pairs = await alternate(overheadRounds, (side) =>
          writeWindow(writer[side], sides[side].name, writers, overheadWindowMs, sides[side]),
        );
        overhead.push({ variant, writers, pairs, sides });
      }
    }

    if (!metricsOnly) {
      const rows: Row[] = [];
      const rate = new Map<string, number>();
      for (const variant of variants) {
        for (const writers of writerCounts) {
          const phase = await phaseOf(variant, writers);
          let rollupTransactions = 0;
          if (variant.mode === 'hits') {
            const beforeRollup = transactions;
            await service.runRollup();
            rollupTransactions = transactions - beforeRollup;
          }
          const after = await service.read(phase.name);
          // Every acknowledged increment is there (plus the one `fresh` made), and the rollup folded them all.
          if (after.value < phase.done + 1 || (variant.mode === 'hits' && (after.pendingHits !== 0 || after.value !== phase.done + 1))) {
            throw new Error(
              `counter ${phase.name} reads ${after.value} with ${after.pendingHits} pending; ${phase.done + 1} were acknowledged`,
            );
          }
          const perSecond = phase.done / phase.seconds;
          rate.set(`${variant.label}/${writers}`, perSecond);
          const { p50, p99 } = phase.latency.summary();
          rows.push({
            variant: variant.label,
            writers: String(writers),
            'increments/s': perSecond,
            failed: String(phase.failed),
            'p50 ms': p50,
            'p99 ms': p99,
            'tx/increment (write)': phase.writeTransactions / Math.max(1, phase.done),
            'tx/increment (+rollup)': (phase.writeTransactions + rollupTransactions) / Math.max(1, phase.done),
          });
        }
      }
      table(
        `Increments on one counter (${rounds} × ${windowMs / 1000} s per row, interleaved; failed = gave up after the retry budget, a 503)`,
        rows,
      );
      for (const writers of writerCounts) {
        const base = rate.get(`${variants[0]!.label}/${writers}`) ?? NaN;
        for (const variant of variants.slice(1)) {
          ratio(
            `${variant.label} vs single-entity ETag counter, ${writers} writer(s)`,
            rate.get(`${variant.label}/${writers}`) ?? NaN,
            base,
            writers === 16 && variant.coalesce ? { atLeast: 10 } : undefined,
          );
        }
      }
    }
    const overheadRows: Row[] = [];
    for (const { variant, writers, sides } of overhead) {
      for (const side of ['off', 'on'] as const) {
        const t = sides[side];
        // Every acknowledged increment is there (plus the one `fresh` made).
        const after = await service.read(t.name);
        if (after.value < t.done + 1) throw new Error(`counter ${t.name} reads ${after.value}; ${t.done + 1} were acknowledged`);
        const { p50, p99 } = t.latency.summary();
        overheadRows.push({
          variant: variant.label,
          metrics: side,
          writers: String(writers),
          'increments/s': t.done / t.seconds,
          failed: String(t.failed),
          'p50 ms': p50,
          'p99 ms': p99,
        });
      }
    }
    table(
      `Metrics off vs on (${overheadRounds} pairs of ${overheadWindowMs / 1000} s windows per row, alternating which side goes first)`,
      overheadRows,
    );
    console.log(`${describeMetricsOn(metricsPolicy)}; ${on.exportedPoints()} data points exported during the run\n`);
    for (const { variant, writers, pairs } of overhead) {
      onOffRatios(`${variant.label}, ${writers} writer(s)`, 'increments', pairs);
    }

    // The CPU an increment's recording costs: the service tallies it in memory (IncrementTally) and an
    // observable reports the tallies when the reader collects; against a synchronous SDK counter record
    // with the same attributes (what an increment cost before), and against the CPU one increment
    // takes at the most writers (the mean of the off windows).
    const names = Array.from({ length: 8 }, (_, i) => `c${i + 1}`);
    const tallied = new IncrementTally();
    const sdk = on.meters.getMeter('bench.sync').createCounter('tallyho.counter.increments.sync');
    const onNs = nsPerCall((i) => tallied.add(names[i % names.length]!, 'hits'));
    const syncNs = nsPerCall((i) => sdk.add(1, { 'tallyho.counter.name': names[i % names.length]!, 'tallyho.counter.mode': 'hits' }));
    console.log(
      `METRICS recording one increment (CPU ns per call): ${fmt(onNs)} ns tallied (reported at collection), ` +
        `${fmt(syncNs)} ns as a synchronous SDK counter record`,
    );
    ratio('recording cost, tallied vs a synchronous SDK counter record (CPU ns per call)', onNs, syncNs);
    const busiest = overhead.filter((o) => o.writers === writerCounts[writerCounts.length - 1]);
    for (const { variant, writers, pairs } of busiest) {
      const perIncrementNs = 1e9 / (pairs.cpu.reduce((n, p) => n + p.baseline, 0) / pairs.cpu.length);
      console.log(
        `METRICS ${variant.label}, ${writers} writers: recording is ${fmt((onNs / perIncrementNs) * 100, 3)}% of the CPU one increment takes with metrics off (${fmt(perIncrementNs / 1000)} µs)`,
      );
    }

    if (!metricsOnly) {
      const readRows: Row[] = [];
      for (const pending of pendingCounts) {
        const name = await fresh({ mode: 'hits', partitions: 4 });
        // One hit row per increment: the rows, not the increments, are what a read pages through.
        for (let i = 1; i < pending; i += 50)
          await Promise.all(Array.from({ length: Math.min(50, pending - i) }, () => uncoalesced.increment(name, 1)));
        for (const [label, consistent] of [
          ['default', false],
          ['consistent', true],
        ] as const) {
          const latency = new Latency();
          const before = transactions;
          for (let i = 0; i < readsPerPoint; i++) {
            const t = performance.now();
            await service.read(name, consistent);
            latency.recordMs(performance.now() - t);
          }
          readRows.push({
            'pending hits': fmt(pending, 0),
            read: label,
            'p50 ms': latency.percentileMs(50),
            'p99 ms': latency.percentileMs(99),
            'tx/read': (transactions - before) / readsPerPoint,
          });
        }
        if (pending === pendingCounts[pendingCounts.length - 1]) {
          await service.runRollup();
          const latency = new Latency();
          const before = transactions;
          for (let i = 0; i < readsPerPoint; i++) {
            const t = performance.now();
            await service.read(name);
            latency.recordMs(performance.now() - t);
          }
          readRows.push({
            'pending hits': `0 (${fmt(pending, 0)} folded)`,
            read: 'default',
            'p50 ms': latency.percentileMs(50),
            'p99 ms': latency.percentileMs(99),
            'tx/read': (transactions - before) / readsPerPoint,
          });
        }
      }
      table(`Read latency of a hits counter (4 partitions), ${readsPerPoint} sequential reads per row`, readRows);
    }
  } finally {
    await on.shutdown();
    await azurite.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
