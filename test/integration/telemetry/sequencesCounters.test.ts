/**
 * Sequences, counters and storage telemetry on Azurite: each metric moves when its event happens,
 * with the caller's name only where the policy lets it through.
 */
import { type Clock, systemClock } from '../../../shared/clock';
import { createStorageClients } from '../../../shared/storage/clients';
import { storageResponsesOf } from '../../../shared/storage/metrics';
import { loadAppConfig } from '../../../shared/app/settings';
import { counterHarness } from '../../support/counters';
import { type FaultProxy, startFaultProxy } from '../../support/faultProxy';
import { sequenceHarness, uniqueTableName } from '../../support/sequences';
import { runStorage } from '../../support/storageAccounts';
import { memoryTelemetry } from '../../support/telemetry';

describe('sequences telemetry', () => {
  it('counts numbers issued, blocks reserved and the time a reservation took, per sequence where allowed', async () => {
    const memory = memoryTelemetry({ callerNames: ['orders'] });
    const h = sequenceHarness();
    await h.create('orders');
    await h.create('invoices');
    const service = h.service({ telemetry: memory.telemetry });
    await service.next('orders', 5);
    await service.next('invoices', 2);
    await service.next('orders', 1);
    const collected = await memory.collect();
    expect(collected.total('tallyho.sequence.numbers.issued', { 'tallyho.sequence.name': 'orders' })).toBe(6);
    // `invoices` is not in the allowed names: counted without a name.
    expect(collected.points('tallyho.sequence.numbers.issued').map((p) => [p.attributes, p.value])).toEqual(
      expect.arrayContaining([[{}, 2]]),
    );
    expect(collected.total('tallyho.sequence.block.reservations')).toBeGreaterThanOrEqual(2);
    expect(collected.total('tallyho.sequence.block.reservation.duration', { 'tallyho.outcome': 'reserved' })).toBe(
      collected.total('tallyho.sequence.block.reservations'),
    );
    await service.shutdown();
  });

  it('counts conditional writes that lost to another instance', async () => {
    const memory = memoryTelemetry();
    const h = sequenceHarness();
    await h.create('contended', { blockSize: { min: 1, max: 1 } });
    const mine = h.service({ telemetry: memory.telemetry });
    const theirs = h.service();
    // Blocks of one: every number is a reservation, and each instance's first write after the
    // other's is on a stale ETag (412), then retried.
    for (let i = 0; i < 5; i++) {
      await theirs.next('contended', 1);
      await mine.next('contended', 1);
    }
    const collected = await memory.collect();
    expect(collected.total('tallyho.sequence.write.retries')).toBeGreaterThan(0);
    expect(collected.total('tallyho.sequence.numbers.issued')).toBe(5);
    await Promise.all([mine.shutdown(), theirs.shutdown()]);
  });
});

describe('counters telemetry', () => {
  it('counts increments (not replays), the hits a read found pending, and what the rollup folded and how far behind it was', async () => {
    const memory = memoryTelemetry({ callerNames: ['views'] });
    const h = counterHarness({ telemetry: memory.telemetry });
    await h.service.configure('views', { safetyWindowSeconds: 0 });
    for (let i = 0; i < 3; i++) await h.service.increment('views', 1);
    await h.service.increment('views', 2, 'key-1');
    await h.service.increment('views', 2, 'key-1');
    const read = await h.service.read('views');
    expect(read.pendingHits).toBe(4);

    let collected = await memory.collect();
    expect(collected.total('tallyho.counter.increments', { 'tallyho.counter.name': 'views', 'tallyho.counter.mode': 'hits' })).toBe(4);
    expect(collected.points('tallyho.counter.hits.pending').map((p) => [p.attributes, p.value])).toEqual([
      [{ 'tallyho.counter.name': 'views' }, 4],
    ]);

    await new Promise((resolve) => setTimeout(resolve, 5));
    const report = await h.service.runRollup();
    expect(report.hitsFolded).toBe(4);
    collected = await memory.collect();
    expect(collected.total('tallyho.counter.rollup.hits.folded')).toBe(4);
    const [lag] = collected.points('tallyho.counter.rollup.lag');
    // The hits are from this minute: the oldest unfolded minute began less than two minutes ago.
    expect(lag?.value).toBeGreaterThanOrEqual(0);
    expect(lag?.value).toBeLessThan(120);
    expect(collected.total('tallyho.counter.rollup.failures')).toBe(0);
  });
});

describe('counters telemetry with counter names left out (the default)', () => {
  it('the rollup lag grows with the age of the oldest unfolded hits and falls to 0 once they are folded (the counter-rollup-lag alert’s state)', async () => {
    const memory = memoryTelemetry();
    // The app's clock runs ahead on demand: twenty minutes without a rollup.
    let ahead = 0;
    const clock: Clock = { now: () => systemClock.now() + ahead, sleep: (ms, signal) => systemClock.sleep(ms, signal) };
    const h = counterHarness({ telemetry: memory.telemetry, clock });
    await h.service.configure('stalled', { safetyWindowSeconds: 0 });
    await h.service.increment('stalled', 1);
    ahead = 20 * 60_000;
    await h.service.runRollup();
    const lagOf = async (): Promise<number | undefined> => (await memory.collect()).points('tallyho.counter.rollup.lag').at(-1)?.value;
    expect(await lagOf()).toBeGreaterThanOrEqual(19 * 60);
    // That run folded them: the next finds nothing waiting.
    await h.service.runRollup();
    expect(await lagOf()).toBe(0);
  });

  it('hits.pending is the sum over the counters read here, and falls to 0 once the rollup folded them', async () => {
    const memory = memoryTelemetry();
    const h = counterHarness({ telemetry: memory.telemetry });
    for (const name of ['pending-a', 'pending-b']) await h.service.configure(name, { safetyWindowSeconds: 0 });
    for (let i = 0; i < 3; i++) await h.service.increment('pending-a', 1);
    for (let i = 0; i < 2; i++) await h.service.increment('pending-b', 1);
    expect((await h.service.read('pending-a')).pendingHits).toBe(3);
    expect((await h.service.read('pending-b')).pendingHits).toBe(2);
    // One series (no names), holding both counters' hits: not whichever counter was read last (2).
    let collected = await memory.collect();
    expect(collected.points('tallyho.counter.hits.pending').map((p) => [p.attributes, p.value])).toEqual([[{}, 5]]);

    await new Promise((resolve) => setTimeout(resolve, 5));
    expect((await h.service.runRollup()).hitsFolded).toBe(5);
    for (const name of ['pending-a', 'pending-b']) expect((await h.service.read(name)).pendingHits).toBe(0);
    collected = await memory.collect();
    expect(collected.points('tallyho.counter.hits.pending').map((p) => [p.attributes, p.value])).toEqual([[{}, 0]]);
  });
});

describe('storage telemetry', () => {
  let proxy: FaultProxy;

  beforeAll(async () => {
    proxy = await startFaultProxy(runStorage());
  });

  afterAll(() => proxy.close());

  it('counts the responses by which storage says "slow down", retries included', async () => {
    const memory = memoryTelemetry();
    const config = loadAppConfig({ AzureWebJobsStorage: proxy.connectionString, TALLYHO_STORAGE_MAX_TRIES: '3' });
    const storage = createStorageClients(config.storage, { retry: config.storageRetry, answered: storageResponsesOf(memory.telemetry) });
    const table = await storage.table(uniqueTableName('thr'));
    let busy = 2;
    proxy.setRules((r) =>
      r.service === 'table' && r.method === 'POST' && busy-- > 0 ? { kind: 'status', status: 503, code: 'ServerBusy' } : undefined,
    );
    await table.createEntity({ partitionKey: 'p', rowKey: 'r' });
    proxy.setRules();
    const collected = await memory.collect();
    expect(collected.total('tallyho.storage.throttled', { 'tallyho.storage.service': 'table', 'http.response.status_code': 503 })).toBe(2);
  });
});
