/**
 * Counters with storage misbehaving, through the fault proxy in front of Azurite: 412 and 503
 * answers, timeouts, refused connections, and writes that land but whose response is lost — while
 * writers increment and two rollups race. The promise is Maelstrom's g-counter check: the final
 * value lies between the sum of acknowledged increments and that sum plus every increment whose
 * outcome the writer could not know; and a positive-only counter never reads lower than before.
 * Storage tries and timeouts are lowered through the settings so each fault resolves quickly.
 */
import { seededRandom, systemClock } from '../../shared/clock';
import type { CounterMode } from '../../shared/counters/definition';
import { totalRowKey } from '../../shared/counters/keys';
import type { CounterService } from '../../shared/counters/service';
import { type FaultAction, type FaultProxy, type ProxiedRequest, startFaultProxy } from '../support/faultProxy';
import { counterHarness, counterTableNames, testConnection } from '../support/counters';

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
}

/** One writer: positive increments until `until`; keyed writers retry a failed increment with its key. */
async function writer(service: CounterService, name: string, id: number, until: number, tally: Tally): Promise<void> {
  const random = seededRandom(1000 + id);
  const keyed = id % 2 === 0;
  for (let n = 0; Date.now() < until; n++) {
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
    if (done) tally.acknowledged += by;
    else tally.indeterminate += by;
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
    proxy = await startFaultProxy(testConnection());
  });

  afterEach(async () => {
    await proxy.close();
  });

  const faulty = (tables: ReturnType<typeof counterTableNames>) =>
    counterHarness({ connection: proxy.connectionString, tables, env: fastFailure, backoff: patient });

  it.each<CounterMode>(['hits', 'sharded'])(
    '%s: 16 writers and two racing rollups under faults pass the g-counter check, and reads never go backwards',
    async (mode) => {
      const tables = counterTableNames();
      const direct = counterHarness({ tables });
      // Covers a hit's worst delay between its timestamp and its landing (3 tries of 1 s plus back-off).
      const safetyWindowSeconds = 4;
      await direct.service.configure('g', { mode, partitions: 4, safetyWindowSeconds });
      // Four instances with four writers each, and two rollup instances, all behind the faults.
      const instances = Array.from({ length: 4 }, () => faulty(tables));
      const rollups = [faulty(tables), faulty(tables)];
      const faults = chaos(mode === 'hits' ? 7 : 8);
      proxy.setRules(faults.rule);

      const tally: Tally = { acknowledged: 0, indeterminate: 0, errors: 0 };
      const until = Date.now() + 7_000;
      let writing = true;
      let folded = 0;
      let rollupFailures = 0;
      const samples: number[] = [];
      const writers = Promise.all(
        Array.from({ length: 16 }, (_, i) => writer(instances[i % instances.length]!.service, 'g', i, until, tally)),
      ).finally(() => (writing = false));
      const rollers = rollups.map((r) =>
        loop(
          () => !writing,
          40,
          async () => {
            const report = await r.service.runRollup().catch(() => undefined);
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

      // Quiet storage, wait out the safety window, and let the rollup fold everything left.
      proxy.setRules();
      await systemClock.sleep(safetyWindowSeconds * 1000 + 100);
      await direct.service.runRollup();
      const final = await direct.service.read('g', true);
      const visible = await direct.service.read('g');

      // The faults did happen, every kind of them, while real work was done.
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
      expect(rollupFailures).toBeLessThan(100);
    },
    60_000,
  );

  async function seed(service: CounterService, hits: number): Promise<void> {
    await service.configure('c', { partitions: 1, safetyWindowSeconds: 0 });
    for (let i = 0; i < hits; i += 25) await Promise.all(Array.from({ length: Math.min(25, hits - i) }, () => service.increment('c', 1)));
    await systemClock.sleep(5);
  }

  it('a rollup that dies between its fold transactions leaves an exact counter; the next run finishes', async () => {
    const tables = counterTableNames();
    const direct = counterHarness({ tables });
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
    const direct = counterHarness({ tables });
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
    const direct = counterHarness({ tables });
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
