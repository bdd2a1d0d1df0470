/**
 * Counters with storage misbehaving, through the fault proxy in front of Azurite: 412 and 503
 * answers, timeouts, refused connections, and writes that land but whose response is lost — while
 * writers increment and two rollups race. The promise is Maelstrom's g-counter check: the final
 * value lies between the sum of acknowledged increments and that sum plus every increment whose
 * outcome the writer could not know; and a positive-only counter never reads lower than before.
 * Group commit gets the same check with batches of several increments in every write, and its own
 * cases: a batch whose response is lost, a batch whose write fails.
 * Storage tries and timeouts are lowered through the settings so each fault resolves quickly.
 */
import { seededRandom, systemClock } from '../../shared/clock';
import type { CounterMode } from '../../shared/counters/definition';
import { totalRowKey } from '../../shared/counters/keys';
import type { CounterService } from '../../shared/counters/service';
import { type FaultAction, type FaultProxy, type ProxiedRequest, startFaultProxy } from '../support/faultProxy';
import { counterHarness, counterTableNames } from '../support/counters';
import { runStorage } from '../support/storageAccounts';

// Short enough that a fault resolves within a second, long enough for a loaded machine's Azurite.
const fastFailure = { TALLYHO_STORAGE_MAX_TRIES: '3', TALLYHO_STORAGE_TRY_TIMEOUT_MS: '1000' };
const patient = { baseMs: 5, maxDelayMs: 200, maxAttempts: 40, maxElapsedMs: 20_000 };

const isTable = (r: ProxiedRequest): boolean => r.service === 'table';
const isBatch = (r: ProxiedRequest): boolean => isTable(r) && r.path.includes('$batch');
const isConditionalUpdate = (r: ProxiedRequest): boolean =>
  isTable(r) && (r.method === 'PUT' || r.method === 'MERGE') && r.headers['if-match'] !== undefined;
const isWrite = (r: ProxiedRequest): boolean => isTable(r) && r.method !== 'GET';

/** Every kind of fault, each on a few percent of the requests it applies to, reproducibly; counted by kind. */
function chaos(seed: number) {
  const random = seededRandom(seed);
  const injected: Record<string, number> = { status412: 0, loseResponse: 0, status503: 0, hang: 0, refuse: 0 };
  const pick = (name: string, action: FaultAction): FaultAction => {
    injected[name] = (injected[name] ?? 0) + 1;
    return action;
  };
  const rule = (r: ProxiedRequest): FaultAction | undefined => {
    if (!isTable(r)) return undefined;
    const roll = random();
    if (roll < 0.04) return isBatch(r) || isConditionalUpdate(r) ? pick('status412', { kind: 'status', status: 412 }) : undefined;
    if (roll < 0.08) return isWrite(r) ? pick('loseResponse', { kind: 'loseResponse' }) : undefined;
    if (roll < 0.1) return pick('status503', { kind: 'status', status: 503 });
    if (roll < 0.11) return pick('hang', { kind: 'hang', ms: 1100 });
    if (roll < 0.12) return pick('refuse', { kind: 'refuse' });
    return undefined;
  };
  return { rule, injected };
}

interface Tally {
  acknowledged: number;
  indeterminate: number;
  errors: number;
  /** Increments acknowledged (calls, not their sum). */
  calls?: number;
}

/** One writer: positive increments until `enough()`; keyed writers retry a failed increment with its key. */
async function writer(
  service: CounterService,
  name: string,
  id: number,
  enough: () => boolean,
  tally: Tally,
  keyed: boolean,
): Promise<void> {
  const random = seededRandom(1000 + id);
  for (let n = 0; !enough(); n++) {
    const by = 1 + Math.floor(random() * 3);
    const key = keyed ? `w${id}-${n}` : undefined;
    let done = false;
    for (let attempt = 0; attempt < (keyed ? 6 : 1) && !done; attempt++) {
      try {
        await service.increment(name, by, key);
        done = true;
      } catch {
        tally.errors++;
      }
    }
    if (done) {
      tally.acknowledged += by;
      tally.calls = (tally.calls ?? 0) + 1;
    } else tally.indeterminate += by;
  }
}

async function loop(until: () => boolean, pauseMs: number, body: () => Promise<void>): Promise<void> {
  while (!until()) {
    await body();
    await systemClock.sleep(pauseMs);
  }
}

describe('counters under storage faults', () => {
  let proxy: FaultProxy;

  beforeEach(async () => {
    proxy = await startFaultProxy(runStorage());
  });

  afterEach(async () => {
    await proxy.close();
  });

  const faulty = (tables: ReturnType<typeof counterTableNames>) =>
    counterHarness({ connection: proxy.connectionString, tables, env: fastFailure, backoff: patient });

  interface ChaosRun {
    readonly mode: CounterMode;
    readonly partitions: number;
    /** Writer instances; writer i runs on instance i mod instances. */
    readonly instances: number;
    readonly writers: number;
    /** Whether writer i sends an Idempotency-Key (and retries with it). */
    readonly keyed: (writer: number) => boolean;
    /** Rollup instances of their own, racing each other and the writers. */
    readonly rollups: number;
    /**
     * When the writers stop: once each of these fault kinds was injected at least once and the work
     * done reached these counts — however long that takes on the machine (no time window).
     */
    readonly until: {
      readonly kinds: readonly string[];
      readonly acknowledged?: number;
      readonly calls?: number;
      readonly samples: number;
      readonly folded?: number;
    };
    readonly seed: number;
  }

  /** Writers, rollups and a reader on one counter while storage misbehaves; then quiet storage, the last fold, and the final read. */
  async function underChaos(run: ChaosRun) {
    const tables = counterTableNames();
    const direct = counterHarness({ tables });
    // Covers a hit's worst delay between its timestamp and its landing (3 tries of 1 s plus back-off).
    const safetyWindowSeconds = 4;
    await direct.service.configure('g', { mode: run.mode, partitions: run.partitions, safetyWindowSeconds });
    const instances = Array.from({ length: run.instances }, () => faulty(tables));
    const rollups = Array.from({ length: run.rollups }, () => faulty(tables));
    const faults = chaos(run.seed);
    let dataWrites = 0;
    const countDataWrites = (r: ProxiedRequest): undefined => {
      if (isWrite(r) && r.path.includes(tables.data)) dataWrites++;
      return undefined;
    };
    proxy.setRules(countDataWrites, faults.rule);

    const tally: Tally = { acknowledged: 0, indeterminate: 0, errors: 0 };
    let writing = true;
    let folded = 0;
    let rollupRuns = 0;
    let rollupFailures = 0;
    const samples: number[] = [];
    const floors = run.until;
    const enough = (): boolean =>
      floors.kinds.every((kind) => (faults.injected[kind] ?? 0) > 0) &&
      tally.errors > 0 &&
      tally.acknowledged > (floors.acknowledged ?? 0) &&
      (tally.calls ?? 0) > (floors.calls ?? 0) &&
      samples.length > floors.samples &&
      folded >= (floors.folded ?? 0);
    const writers = Promise.all(
      Array.from({ length: run.writers }, (_, i) => writer(instances[i % instances.length]!.service, 'g', i, enough, tally, run.keyed(i))),
    ).finally(() => (writing = false));
    const rollers = rollups.map((r) =>
      loop(
        () => !writing,
        40,
        async () => {
          const report = await r.service.runRollup().catch(() => undefined);
          rollupRuns++;
          if (report === undefined) rollupFailures++;
          else folded += report.hitsFolded;
        },
      ),
    );
    // The reader goes straight to Azurite: the check is on what storage holds, not on read faults.
    const reader = loop(
      () => !writing,
      25,
      async () => {
        samples.push((await direct.service.read('g')).value);
      },
    );
    await Promise.all([writers, ...rollers, reader]);

    // Quiet storage, and let the rollup fold everything left. The safety window exists for hits that
    // land after their stamp; once every write the proxy forwarded has been answered, none can land
    // any more, so the last rollup runs on a clock the window ahead instead of waiting it out.
    proxy.setRules();
    await proxy.forwardedSettled();
    const windowAhead = safetyWindowSeconds * 1000 + 100;
    const later = counterHarness({ tables, clock: { now: () => Date.now() + windowAhead, sleep: systemClock.sleep } });
    await later.service.runRollup();
    const final = await later.service.read('g', true);
    const visible = await direct.service.read('g');
    return { faults, tally, samples, folded, rollupRuns, rollupFailures, final, visible, dataWrites };
  }

  it.each<CounterMode>(['hits', 'sharded'])(
    '%s: 16 writers and two racing rollups under faults pass the g-counter check, and reads never go backwards',
    async (mode) => {
      // Four instances with four writers each, and two rollup instances, all behind the faults.
      const kinds = ['status412', 'loseResponse', 'status503', 'hang', 'refuse'];
      const { faults, tally, samples, folded, rollupRuns, rollupFailures, final, visible } = await underChaos({
        mode,
        partitions: 4,
        instances: 4,
        writers: 16,
        keyed: (i) => i % 2 === 0,
        rollups: 2,
        // Driven until every kind of fault happened while real work was done (and, in hits mode, the
        // racing rollups folded some of it), not for a number of seconds.
        until: { kinds, acknowledged: 100, samples: 10, ...(mode === 'hits' ? { folded: 1 } : {}) },
        seed: mode === 'hits' ? 7 : 8,
      });

      // The faults did happen, every kind of them, while real work was done.
      expect(Object.keys(faults.injected).sort()).toEqual([...kinds].sort());
      expect(Object.entries(faults.injected).filter(([, n]) => n === 0)).toEqual([]);
      expect(tally.errors).toBeGreaterThan(0);
      expect(tally.acknowledged).toBeGreaterThan(100);
      expect(samples.length).toBeGreaterThan(10);
      // g-counter: acknowledged <= final <= acknowledged + indeterminate.
      expect(final.value).toBeGreaterThanOrEqual(tally.acknowledged);
      expect(final.value).toBeLessThanOrEqual(tally.acknowledged + tally.indeterminate);
      expect(visible.value).toBe(final.value);
      // Never backwards (positive increments only), and never beyond what was written.
      for (let i = 1; i < samples.length; i++) expect(samples[i]).toBeGreaterThanOrEqual(samples[i - 1]!);
      expect(Math.max(...samples)).toBeLessThanOrEqual(final.value);
      if (mode === 'hits') {
        expect(folded).toBeGreaterThan(0);
        expect(final.pendingHits).toBe(0);
      }
      // Most rollups get through the faults (their share, not a count: the run lasts as long as the
      // machine needs to reach the floors above).
      expect(rollupFailures).toBeLessThan(rollupRuns / 2);
    },
    300_000,
  );

  it.each<CounterMode>(['hits', 'sharded'])(
    '%s, group commit: batched increments from two instances under faults pass the g-counter check',
    async (mode) => {
      // Sixteen writers per instance without keys, so every increment goes through a batch; two
      // partitions, so each instance keeps two batch writes under way and the instances race for shards.
      // hits: long enough past the safety window for the racing rollup to fold (and meet faults) meanwhile.
      // An insert cannot lose a race: in hits mode only the rollup's few transactions can meet a 412.
      const expected = ['status412', 'loseResponse', 'status503', 'hang', 'refuse'].filter(
        (kind) => mode === 'sharded' || kind !== 'status412',
      );
      const { faults, tally, samples, final, visible, dataWrites } = await underChaos({
        mode,
        partitions: 2,
        instances: 2,
        writers: 32,
        keyed: () => false,
        rollups: 1,
        // hits: on past the safety window, so the racing rollup folds (and meets faults) meanwhile.
        until: { kinds: expected, calls: 200, samples: 0, ...(mode === 'hits' ? { folded: 1 } : {}) },
        seed: mode === 'hits' ? 17 : 18,
      });

      expect(expected.filter((kind) => faults.injected[kind] === 0)).toEqual([]);
      expect(tally.errors).toBeGreaterThan(0);
      expect(tally.calls).toBeGreaterThan(200);
      // Batches carried several increments: far fewer data writes (retries included) than increments.
      expect(dataWrites).toBeLessThan((tally.calls ?? 0) / 2);
      expect(final.value).toBeGreaterThanOrEqual(tally.acknowledged);
      expect(final.value).toBeLessThanOrEqual(tally.acknowledged + tally.indeterminate);
      expect(visible.value).toBe(final.value);
      for (let i = 1; i < samples.length; i++) expect(samples[i]).toBeGreaterThanOrEqual(samples[i - 1]!);
      expect(Math.max(...samples)).toBeLessThanOrEqual(final.value);
    },
    300_000,
  );

  it.each<CounterMode>(['hits', 'sharded'])(
    '%s, group commit: a batch whose response is lost is counted once, with every increment in it',
    async (mode) => {
      const tables = counterTableNames();
      const direct = counterHarness({ tables });
      await direct.service.configure('l', { mode, partitions: 1 });
      const unlucky = faulty(tables);
      let writes = 0;
      // Every other write of counter data lands but its answer is lost; the SDK then retries it.
      proxy.setRules((r) => (isWrite(r) && r.path.includes(tables.data) && writes++ % 2 === 0 ? { kind: 'loseResponse' } : undefined));
      for (let round = 0; round < 10; round++) {
        const answers = await Promise.all(Array.from({ length: 8 }, () => unlucky.service.increment('l', 1)));
        expect(answers.every((a) => !a.replayed)).toBe(true);
      }
      // One partition, one write at a time: each round is a lone write and a batch of seven.
      expect(writes).toBeLessThanOrEqual(40);
      expect(await direct.service.read('l', true)).toMatchObject({ value: 80 });
    },
  );

  it('group commit: a batch write that fails fails every increment in it, and none of them is counted', async () => {
    const tables = counterTableNames();
    const direct = counterHarness({ tables });
    await direct.service.configure('f', { mode: 'hits', partitions: 1 });
    const unlucky = faulty(tables);
    let down = true;
    proxy.setRules((r) => (down && isWrite(r) && r.path.includes(tables.data) ? { kind: 'status', status: 503 } : undefined));
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, () => unlucky.service.increment('f', 1)));
    expect(outcomes.map((o) => o.status)).toEqual(Array.from({ length: 8 }, () => 'rejected'));
    expect(await direct.service.read('f', true)).toMatchObject({ value: 0 });
    down = false;
    await Promise.all(Array.from({ length: 8 }, () => unlucky.service.increment('f', 2)));
    expect(await direct.service.read('f', true)).toMatchObject({ value: 16 });
  });

  /** `hits` hit rows: the service must write every increment on its own (`writesInFlight: 0`). */
  async function seed(service: CounterService, hits: number): Promise<void> {
    await service.configure('c', { partitions: 1, safetyWindowSeconds: 0 });
    for (let i = 0; i < hits; i += 25) await Promise.all(Array.from({ length: Math.min(25, hits - i) }, () => service.increment('c', 1)));
    await systemClock.sleep(5);
  }

  it('a rollup that dies between its fold transactions leaves an exact counter; the next run finishes', async () => {
    const tables = counterTableNames();
    const direct = counterHarness({ tables, writesInFlight: 0 });
    const broken = faulty(tables);
    await seed(direct.service, 250);
    let batches = 0;
    // The first fold transaction goes through; after it, storage is unreachable for transactions.
    proxy.setRules((r) => (isBatch(r) && batches++ >= 1 ? { kind: 'refuse' } : undefined));
    const report = await broken.service.runRollup();
    expect(report).toMatchObject({ partitions: 1, failed: 1, dirtyCleared: 0 });
    expect(await direct.service.read('c')).toMatchObject({ value: 250, pendingHits: 151 });
    expect(await direct.service.read('c', true)).toMatchObject({ value: 250, pendingHits: 151 });
    proxy.setRules();
    expect((await broken.service.runRollup()).hitsFolded).toBe(151);
    expect(await direct.service.read('c', true)).toMatchObject({ value: 250, pendingHits: 0 });
  });

  it('a fold whose response is lost is recognised on the re-read, not applied twice', async () => {
    const tables = counterTableNames();
    const direct = counterHarness({ tables, writesInFlight: 0 });
    const unlucky = faulty(tables);
    await seed(direct.service, 120);
    let lost = 0;
    proxy.setRules((r) => (isBatch(r) && lost++ < 2 ? { kind: 'loseResponse' } : undefined));
    const report = await unlucky.service.runRollup();
    expect(lost).toBeGreaterThanOrEqual(2);
    expect(report.lostRaces).toBeGreaterThanOrEqual(1);
    expect(report.failed).toBe(0);
    expect(await direct.service.read('c', true)).toMatchObject({ value: 120, pendingHits: 0 });
    const rows = await direct.rows('data');
    expect(rows.map((r) => r.rowKey)).toEqual([totalRowKey]);
  });

  it('two rollups folding the same partition at once neither lose nor double-count', async () => {
    const tables = counterTableNames();
    const direct = counterHarness({ tables, writesInFlight: 0 });
    await seed(direct.service, 600);
    const [a, b] = [counterHarness({ tables, backoff: patient }), counterHarness({ tables, backoff: patient })];
    const [ra, rb] = await Promise.all([a.service.runRollup(), b.service.runRollup()]);
    expect(ra.hitsFolded + rb.hitsFolded).toBe(600);
    expect(await direct.service.read('c', true)).toMatchObject({ value: 600, pendingHits: 0 });
  });

  it('a sharded increment whose response is lost is counted once (the shard remembers its recent writes)', async () => {
    const tables = counterTableNames();
    const direct = counterHarness({ tables });
    await direct.service.configure('s', { mode: 'sharded', partitions: 1 });
    const unlucky = faulty(tables);
    let lost = 0;
    proxy.setRules((r) => (isWrite(r) && lost++ % 2 === 0 ? { kind: 'loseResponse' } : undefined));
    for (let i = 0; i < 10; i++) await unlucky.service.increment('s', 1);
    expect(lost).toBeGreaterThanOrEqual(10);
    expect((await direct.service.read('s')).value).toBe(10);
  });
});
