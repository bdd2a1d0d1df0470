/**
 * The refill log event operators rely on (`sequence.block_reserved`): one per block reserved, with
 * the range, its size, what was left and waiting when it landed, the lost races it took and how long
 * it took. Azurite for storage; the logger and (where timing is asserted) the clock are injected.
 */
import { ManualClock } from '../../../shared/clock';
import { MemoryLogger } from '../../../shared/log';
import { sequenceHarness } from '../../support/sequences';

async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 2));
}

describe('sequence refill log on Azurite', () => {
  it('logs sequence.block_reserved for the first block and for a prefetch, with range, size, backlog and duration', async () => {
    const h = sequenceHarness();
    await h.create('logged', { start: 1, blockSize: { min: 100, max: 100 } });
    const logger = new MemoryLogger();
    const clock = new ManualClock();
    const allocator = await h.allocator('logged', { logger, clock });

    // The first request waits for the first block; the refill takes 250 ms on the injected clock.
    const first = allocator.take(1);
    await clock.advance(250);
    expect(await first).toEqual([1]);
    // 89 more leave 10 (10%): a prefetch starts, taking 40 ms.
    await allocator.take(89);
    expect(allocator.stats().refillInFlight).toBe(true);
    await clock.advance(40);
    await until(() => !allocator.stats().refillInFlight);

    const reserved = logger.entries.filter((e) => e.event === 'sequence.block_reserved');
    expect(reserved).toEqual([
      {
        level: 'info',
        event: 'sequence.block_reserved',
        fields: { sequence: 'logged', lo: 1, hi: 101, size: 100, remainingBefore: 0, waiting: 1, lostRaces: 0, ms: 250 },
      },
      {
        level: 'info',
        event: 'sequence.block_reserved',
        fields: { sequence: 'logged', lo: 101, hi: 201, size: 100, remainingBefore: 10, waiting: 0, lostRaces: 0, ms: 40 },
      },
    ]);
    expect(await h.highWaterMark('logged')).toBe(201);
    await allocator.close();
  });

  it('counts the lost races of a refill that another instance overtook', async () => {
    const h = sequenceHarness();
    await h.create('raced', { start: 1, blockSize: { min: 10, max: 10 } });
    const logger = new MemoryLogger();
    const mine = await h.allocator('raced', { logger, prefetchAt: 0 });
    const other = await h.allocator('raced', { prefetchAt: 0 });
    expect(await mine.take(10)).toEqual(Array.from({ length: 10 }, (_, i) => 1 + i));
    // The other instance moves the high-water mark, so our next write (with the ETag we hold) gets a 412.
    expect(await other.take(1)).toEqual([11]);
    expect(await mine.take(1)).toEqual([21]);

    expect(logger.events('sequence.block_reserved')).toEqual([
      expect.objectContaining({ sequence: 'raced', lo: 1, hi: 11, size: 10, remainingBefore: 0, waiting: 1, lostRaces: 0 }),
      expect.objectContaining({ sequence: 'raced', lo: 21, hi: 31, size: 10, remainingBefore: 0, waiting: 1, lostRaces: 1 }),
    ]);
    expect(mine.stats().retries412).toBe(1);
    await Promise.all([mine.close(), other.close()]);
  });
});
