/**
 * Sequences with storage misbehaving, through the fault proxy in front of Azurite: 412 storms, 500
 * and 503 answers, timeouts, refused connections, and writes that land but whose response is lost.
 * The promises under fault: no duplicates, no gap larger than the blocks in flight when the faults
 * hit, a clear 503 with Retry-After while storage is unusable, and recovery once it is back.
 * Storage tries and timeouts are lowered through the settings so each fault resolves in well under
 * a second.
 */
import { problemContentType } from '../../shared/errors';
import { seededRandom } from '../../shared/clock';
import type { SequenceAllocator } from '../../shared/sequences/allocator';
import { sequencesRoutes } from '../../shared/sequences/routes';
import { type FaultAction, type FaultProxy, type ProxiedRequest, startFaultProxy } from '../support/faultProxy';
import { callRoute, routeNamed } from '../support/routeRequest';
import { driveAllocator } from '../support/sequenceLoad.cjs';
import { accountFor, type InstanceOutcome, sequenceHarness, type SequenceHarness, storageFor } from '../support/sequences';
import { runStorage } from '../support/storageAccounts';

/** For the tests that make storage fail: give up on a request after 2 tries of at most 1 s each. */
const fastFailure = { TALLYHO_STORAGE_MAX_TRIES: '2', TALLYHO_STORAGE_TRY_TIMEOUT_MS: '1000' };

describe('sequences under storage faults', () => {
  let proxy: FaultProxy;
  let h: SequenceHarness;
  let entityPath: string;

  /** Fresh tables behind the proxy, with these storage settings. */
  const useHarness = (env: Record<string, string>): void => {
    h = sequenceHarness(storageFor(proxy.connectionString, {}, env));
    entityPath = `/${h.sequencesTable}(PartitionKey='s',RowKey='sequence')`;
  };

  beforeEach(async () => {
    proxy = await startFaultProxy(runStorage());
    useHarness(fastFailure);
  });

  afterEach(async () => {
    await proxy.close();
  });

  const isEntity = (r: ProxiedRequest): boolean => r.service === 'table' && decodeURIComponent(r.path).includes(entityPath);
  const isWrite = (r: ProxiedRequest): boolean => isEntity(r) && r.method !== 'GET';
  /** A rule that applies `action` to matching requests while `active()` holds, counting them. */
  const faultWhile = (match: (r: ProxiedRequest) => boolean, action: () => FaultAction | undefined) => {
    let hits = 0;
    return {
      hits: () => hits,
      rule: (r: ProxiedRequest): FaultAction | undefined => {
        if (!match(r)) return undefined;
        const decided = action();
        if (decided !== undefined) hits++;
        return decided;
      },
    };
  };

  async function run(allocators: SequenceAllocator[], numbers: number): Promise<{ outcomes: InstanceOutcome[]; failures: string[] }> {
    const driven = await Promise.all(
      allocators.map((a, i) => driveAllocator(a, { numbers, random: seededRandom(i + 1), callers: 3, retryDelayMs: 20 })),
    );
    const outcomes: InstanceOutcome[] = [];
    for (const [i, a] of allocators.entries())
      outcomes.push({ label: `instance ${i}`, issued: driven[i]?.issued ?? [], report: await a.close() });
    return { outcomes, failures: driven.flatMap((d) => d.failures) };
  }

  it('survives a 412 storm: half of all writes rejected, four instances, no duplicates and no gaps', async () => {
    // Default storage timeouts: on a busy machine a spurious timeout would be a fault of its own.
    useHarness({});
    await h.create('s', { start: 1, blockSize: { min: 10, max: 100 } });
    const random = seededRandom(412);
    const storm = faultWhile(isWrite, () => (random() < 0.5 ? { kind: 'status', status: 412 } : undefined));
    proxy.setRules(storm.rule);
    const allocators = await Promise.all([1, 2, 3, 4].map(() => h.allocator('s')));
    const { outcomes, failures } = await run(allocators, 1000);
    proxy.setRules();
    expect(failures.filter((code) => code !== 'ConcurrencyExhausted')).toEqual([]);
    const accounting = accountFor(outcomes, 1, await h.highWaterMark('s'));
    expect(accounting).toEqual({ total: 4000, duplicates: 0, notIncreasing: [], unexplained: [], aboveHighWaterMark: 0 });
    expect(storm.hits()).toBeGreaterThan(20);
    const retries = allocators.reduce((sum, a) => sum + a.stats().retries412, 0);
    expect(retries).toBeGreaterThanOrEqual(storm.hits());
  });

  it('answers a clear 503 with Retry-After when every write loses, and recovers when the storm ends', async () => {
    const service = h.service({ backoff: { baseMs: 5, maxDelayMs: 50, maxAttempts: 5, maxElapsedMs: 1000 } });
    const next = routeNamed(sequencesRoutes({ service: () => service }), 'sequencesNext');
    await h.create('s', { blockSize: { min: 10, max: 10 } });
    expect((await callRoute(next, { params: { name: 's' }, body: { count: 10 } })).status).toBe(200);
    // That emptied the first block and started a prefetch; let it land before the storm.
    while ((await service.describe('s')).instance?.refillInFlight === true) await new Promise((r) => setTimeout(r, 5));
    const before = await h.highWaterMark('s');
    proxy.setRules(faultWhile(isWrite, () => ({ kind: 'status', status: 412 })).rule);
    const inHand = await callRoute<{ numbers: number[] }>(next, { params: { name: 's' }, body: { count: 10 } });
    expect(inHand.body.numbers).toEqual(Array.from({ length: 10 }, (_, i) => 11 + i));
    const refused = await callRoute<{ code: string }>(next, { params: { name: 's' } });
    expect(refused.status).toBe(503);
    expect(refused.headers['content-type']).toBe(problemContentType);
    expect(refused.body.code).toBe('ConcurrencyExhausted');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(h.logger.events('occ.retries_exhausted').length).toBeGreaterThanOrEqual(1);
    expect(await h.highWaterMark('s')).toBe(before);
    proxy.setRules();
    const recovered = await callRoute<{ numbers: number[] }>(next, { params: { name: 's' } });
    expect(recovered.status).toBe(200);
    expect(recovered.body.numbers).toEqual([21]); // nothing was lost
    await service.shutdown();
  });

  it.each([
    ['500 responses', { kind: 'status', status: 500 } as const],
    ['503 responses', { kind: 'status', status: 503 } as const],
    ['timeouts', { kind: 'hang', ms: 3000 } as const],
    ['refused connections', { kind: 'refuse' } as const],
  ])('while storage gives %s: numbers in hand are still served, then a clear 503, then recovery', async (_label, action: FaultAction) => {
    const service = h.service();
    const next = routeNamed(sequencesRoutes({ service: () => service }), 'sequencesNext');
    await h.create('s', { blockSize: { min: 20, max: 20 } });
    expect((await callRoute<{ numbers: number[] }>(next, { params: { name: 's' } })).body.numbers).toEqual([1]);
    const before = await h.entities();
    proxy.setRules(() => action);
    // 19 numbers are in hand; prefetch fails quietly in the background, requests keep being served.
    const inHand = await callRoute<{ numbers: number[] }>(next, { params: { name: 's' }, body: { count: 19 } });
    expect(inHand.status).toBe(200);
    expect(inHand.body.numbers[18]).toBe(20);
    const down = await callRoute<{ code: string }>(next, { params: { name: 's' } });
    expect(down.status).toBe(503);
    expect(down.headers['content-type']).toBe(problemContentType);
    expect(down.body.code).toBe('DependencyUnavailable');
    expect(Number(down.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    proxy.setRules();
    expect(await h.entities()).toEqual(before);
    const back = await callRoute<{ numbers: number[] }>(next, { params: { name: 's' }, body: { count: 2 } });
    expect(back.status).toBe(200);
    expect(back.body.numbers).toEqual([21, 22]); // the failed refills reserved nothing: no gap
    await service.shutdown();
  });

  it('keeps the block when a write lands but its response is lost (the SDK retry sees 412)', async () => {
    await h.create('s', { blockSize: { min: 10, max: 10 } });
    let lost = 0;
    proxy.setRules((r) => (isWrite(r) && lost++ < 1 ? { kind: 'loseResponse' } : undefined));
    const allocator = await h.allocator('s', { prefetchAt: 0 });
    expect(await allocator.take(15)).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
    expect(lost).toBeGreaterThanOrEqual(1);
    expect(allocator.stats().recoveredWrites).toBe(1);
    expect(h.logger.events('sequence.write_recovered')).toHaveLength(1);
    await allocator.close();
    expect(await h.highWaterMark('s')).toBe(16);
  });

  it('recognises its own write on the next refill when every try of it lost the response', async () => {
    await h.create('s', { blockSize: { min: 10, max: 10 } });
    const allocator = await h.allocator('s', { prefetchAt: 0 });
    await allocator.take(10);
    proxy.setRules((r) => (isWrite(r) ? { kind: 'loseResponse' } : undefined));
    await expect(allocator.take(1)).rejects.toMatchObject({ code: 'DependencyUnavailable' });
    expect(await h.highWaterMark('s')).toBe(21); // the write landed
    proxy.setRules();
    expect(await allocator.take(1)).toEqual([11]); // and the block was kept
    expect(allocator.stats().recoveredWrites).toBe(1);
    await allocator.close();
    expect(await h.highWaterMark('s')).toBe(12);
  });

  it('with lost responses among four contending instances: no duplicates, gaps within the blocks in flight', async () => {
    const blockMax = 50;
    useHarness({});
    await h.create('s', { start: 1, blockSize: { min: 10, max: blockMax } });
    const random = seededRandom(7);
    const losing = faultWhile(isWrite, () => (random() < 0.15 ? { kind: 'loseResponse' } : undefined));
    proxy.setRules(losing.rule);
    const allocators = await Promise.all([1, 2, 3, 4].map(() => h.allocator('s')));
    const { outcomes, failures } = await run(allocators, 600);
    proxy.setRules();
    expect(failures.filter((code) => code !== 'ConcurrencyExhausted' && code !== 'DependencyUnavailable')).toEqual([]);
    const accounting = accountFor(outcomes, 1, await h.highWaterMark('s'));
    expect(accounting).toMatchObject({ total: 2400, duplicates: 0, notIncreasing: [], aboveHighWaterMark: 0 });
    // A lost response can cost at most the block that write reserved, and only when another
    // instance wrote before the loser could look.
    expect(losing.hits()).toBeGreaterThan(5);
    expect(accounting.unexplained.length).toBeLessThanOrEqual(losing.hits() * blockMax);
  });
});
