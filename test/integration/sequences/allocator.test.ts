/**
 * One allocator at a time against Azurite: prefetch, a single refill for many waiters, requests
 * spanning blocks, order, tail return on close, gaps reported when a tail cannot go back, the
 * limit at Number.MAX_SAFE_INTEGER, and block sizes adapting on a fake clock.
 */
import { ManualClock } from '../../../shared/clock';
import { isAppError } from '../../../shared/errors';
import { maxSequenceValue } from '../../../shared/sequences/definition';
import { sequenceHarness, storageFor } from '../../support/sequences';

/** Counts the table writes (anything but GET) the SDK sends. */
function writeCounter(): { count: () => number; observe: (service: string, method: string) => void } {
  let writes = 0;
  return {
    count: () => writes,
    observe: (service, method) => {
      if (service === 'table' && method !== 'GET') writes++;
    },
  };
}

async function settle(ms = 0): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

describe('sequence allocator on Azurite', () => {
  it('prefetches the next block when 10% of the current one remains, so no request waits at the boundary', async () => {
    const h = sequenceHarness();
    await h.create('s', { start: 1, blockSize: { min: 100, max: 100 } });
    const allocator = await h.allocator('s');
    expect(await allocator.take(1)).toEqual([1]);
    expect(allocator.stats()).toMatchObject({ refills: 1, remaining: 99, refillInFlight: false });
    await allocator.take(88); // 11 left: above 10%
    expect(allocator.stats().refillInFlight).toBe(false);
    await allocator.take(1); // 10 left: prefetch starts
    expect(allocator.stats().refillInFlight).toBe(true);
    while (allocator.stats().refillInFlight) await settle(2);
    expect(allocator.stats()).toMatchObject({ refills: 2, remaining: 110 });
    const across = await allocator.take(20);
    expect(across).toEqual(Array.from({ length: 20 }, (_, i) => 91 + i));
    expect(allocator.stats().boundaryWaits).toBe(1); // only the very first request waited
    expect(await h.highWaterMark('s')).toBe(201);
    await allocator.close();
  });

  it('serves everyone waiting at a block boundary from one refill, in arrival order', async () => {
    const writes = writeCounter();
    const h = sequenceHarness(storageFor(undefined, { observe: writes.observe }));
    await h.create('s', { blockSize: { min: 100, max: 1000 } });
    const allocator = await h.allocator('s', { prefetchAt: 0 });
    await allocator.take(100); // the first block, used up; no prefetch
    const before = writes.count();
    const order: number[][] = [];
    const waiting = Array.from({ length: 50 }, (_, i) => allocator.take(i % 3 === 0 ? 2 : 1).then((n) => order.push(n)));
    expect(allocator.stats().refillInFlight).toBe(true);
    await Promise.all(waiting);
    expect(writes.count() - before).toBe(1);
    expect(allocator.stats()).toMatchObject({ refills: 2, boundaryWaits: 51 });
    const flat = order.flat();
    expect(flat).toEqual(Array.from({ length: flat.length }, (_, i) => 101 + i));
    await allocator.close();
  });

  it('lets nobody overtake a large request waiting at the boundary, and spans blocks for it', async () => {
    const h = sequenceHarness();
    await h.create('s', { blockSize: { min: 10, max: 10 } });
    const allocator = await h.allocator('s', { prefetchAt: 0 });
    const big = allocator.take(35);
    const small = allocator.take(1);
    expect(await big).toEqual(Array.from({ length: 35 }, (_, i) => 1 + i));
    expect(await small).toEqual([36]);
    expect(allocator.stats().refills).toBe(4);
    await allocator.close();
  });

  it('returns the unused tail on close, so the next instance continues without a gap', async () => {
    const h = sequenceHarness();
    await h.create('s', { blockSize: { min: 100, max: 100 } });
    const first = await h.allocator('s');
    await first.take(30);
    const report = await first.close();
    expect(report).toEqual({ returned: { lo: 31, hi: 101 }, abandoned: [] });
    expect(await h.highWaterMark('s')).toBe(31);
    expect(h.logger.events('sequence.tail_returned')).toEqual([expect.objectContaining({ sequence: 's', lo: 31, hi: 101, count: 70 })]);
    await expect(first.take(1)).rejects.toMatchObject({ code: 'DependencyUnavailable' });
    const second = await h.allocator('s');
    expect(await second.take(2)).toEqual([31, 32]);
    await second.close();
  });

  it('keeps a tail it cannot return (another instance reserved after it) and reports it as a gap', async () => {
    const h = sequenceHarness();
    await h.create('s', { blockSize: { min: 100, max: 100 } });
    const a = await h.allocator('s');
    const b = await h.allocator('s');
    await a.take(10); // a: [1, 101)
    await b.take(1); // b: [101, 201), after a lost one race
    expect(b.stats().retries412).toBe(1);
    expect(h.logger.events('occ.retry')).toHaveLength(1);
    const reportA = await a.close();
    expect(reportA).toEqual({ returned: undefined, abandoned: [{ lo: 11, hi: 101 }] });
    expect(h.logger.events('sequence.gap')).toEqual([expect.objectContaining({ sequence: 's', count: 90 })]);
    expect(await h.highWaterMark('s')).toBe(201);
    expect((await b.close()).returned).toEqual({ lo: 102, hi: 201 });
    expect(await h.highWaterMark('s')).toBe(102);
  });

  it('stops at Number.MAX_SAFE_INTEGER with a clear 409 and nothing corrupted', async () => {
    const h = sequenceHarness();
    const start = maxSequenceValue - 14;
    await h.create('s', { start, blockSize: { min: 10, max: 10 } });
    const allocator = await h.allocator('s');
    const numbers = await allocator.take(15);
    expect(numbers[numbers.length - 1]).toBe(maxSequenceValue);
    expect(numbers.every(Number.isSafeInteger)).toBe(true);
    const err: unknown = await allocator.take(1).catch((e: unknown) => e);
    expect(isAppError(err) && err.code).toBe('Conflict');
    expect(isAppError(err) && err.message).toMatch(/exhausted/);
    expect(await h.highWaterMark('s')).toBe(maxSequenceValue + 1);
    await allocator.close();
  });

  it('fails waiters with CorruptState naming the sequence when stored state turns corrupt, and writes nothing', async () => {
    const h = sequenceHarness();
    await h.create('s', { blockSize: { min: 10, max: 10 } });
    const allocator = await h.allocator('s', { prefetchAt: 0 });
    await allocator.take(10);
    const table = await h.table();
    await table.updateEntity({ partitionKey: 's', rowKey: 'sequence', next: -5 }, 'Merge');
    const before = await h.entities();
    const err: unknown = await allocator.take(1).catch((e: unknown) => e);
    expect(isAppError(err) && err.code).toBe('CorruptState');
    expect(isAppError(err) && err.message).toContain('"s"');
    expect(await h.entities()).toEqual(before);
    expect(h.logger.events('sequence.refill_failed')).toEqual([expect.objectContaining({ sequence: 's', code: 'CorruptState' })]);
    await allocator.close();
  });

  it('adapts its block size to the rate on a fake clock: doubling under load, halving when idle', async () => {
    const h = sequenceHarness();
    await h.create('s', { blockSize: { min: 10, max: 80 }, refillTargetSeconds: 10 });
    const clock = new ManualClock();
    const allocator = await h.allocator('s', { clock, prefetchAt: 0 });
    const sizes: number[] = [];
    for (let i = 0; i < 5; i++) {
      await allocator.take(allocator.stats().remaining + 1);
      sizes.push(allocator.stats().blockSize);
      await clock.advance(1000); // each block lasts a second: far below half the target
    }
    expect(sizes).toEqual([10, 20, 40, 80, 80]);
    for (let i = 0; i < 3; i++) {
      await clock.advance(60_000); // each block lasts a minute: more than twice the target
      await allocator.take(allocator.stats().remaining + 1);
      sizes.push(allocator.stats().blockSize);
    }
    expect(sizes.slice(5)).toEqual([40, 20, 10]);
    await allocator.close();
  });
});
