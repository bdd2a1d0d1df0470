import { ManualClock } from '../../../shared/clock';
import { BlockSizer, nextBlockSize } from '../../../shared/sequences/blockPolicy';

const bounds = { min: 10, max: 1000 };
const targetMs = 10_000;

describe('block size policy', () => {
  it('doubles a block that lasted less than half the target interval', () => {
    expect(nextBlockSize({ previous: 100, lastedMs: 4_999, targetMs, bounds })).toBe(200);
  });

  it('halves a block that lasted more than twice the target interval', () => {
    expect(nextBlockSize({ previous: 100, lastedMs: 20_001, targetMs, bounds })).toBe(50);
  });

  it('keeps the size inside the dead band, edges included', () => {
    for (const lastedMs of [5_000, 10_000, 20_000]) expect(nextBlockSize({ previous: 100, lastedMs, targetMs, bounds })).toBe(100);
  });

  it('stays within the configured bounds', () => {
    expect(nextBlockSize({ previous: 800, lastedMs: 1, targetMs, bounds })).toBe(1000);
    expect(nextBlockSize({ previous: 15, lastedMs: 60_000, targetMs, bounds })).toBe(10);
    expect(nextBlockSize({ previous: 5, lastedMs: 10_000, targetMs, bounds })).toBe(10);
  });
});

/** A refill that succeeds at once. */
function refill(sizer: BlockSizer, clock: ManualClock): number {
  const size = sizer.propose();
  sizer.record(size, clock.now());
  return size;
}

describe('block sizer on a fake clock', () => {
  it('starts at the minimum, grows under load, settles, and shrinks when traffic drops', async () => {
    const clock = new ManualClock();
    const sizer = new BlockSizer(clock, bounds, targetMs);
    const sizes: number[] = [refill(sizer, clock)];
    // Heavy traffic: a block lasts one second.
    for (let i = 0; i < 8; i++) {
      await clock.advance(1_000);
      sizes.push(refill(sizer, clock));
    }
    expect(sizes).toEqual([10, 20, 40, 80, 160, 320, 640, 1000, 1000]);
    // Traffic matching the target: the size holds.
    await clock.advance(9_000);
    expect(refill(sizer, clock)).toBe(1000);
    // Quiet: each block lasts a minute.
    const shrinking: number[] = [];
    for (let i = 0; i < 8; i++) {
      await clock.advance(60_000);
      shrinking.push(refill(sizer, clock));
    }
    expect(shrinking).toEqual([500, 250, 125, 63, 32, 16, 10, 10]);
    expect(sizer.current).toBe(10);
  });

  it('converges on about one refill per target interval at a steady rate', async () => {
    const clock = new ManualClock();
    const sizer = new BlockSizer(clock, { min: 1, max: 1_000_000 }, targetMs);
    const ratePerMs = 3; // 3,000 numbers per second
    let size = refill(sizer, clock);
    for (let i = 0; i < 40; i++) {
      await clock.advance(size / ratePerMs);
      size = refill(sizer, clock);
    }
    const lastedMs = size / ratePerMs;
    expect(lastedMs).toBeGreaterThanOrEqual(targetMs / 2);
    expect(lastedMs).toBeLessThanOrEqual(targetMs * 2);
  });

  it('does not count a failed refill: retrying at once after a failure does not double the size', async () => {
    const clock = new ManualClock();
    const sizer = new BlockSizer(clock, bounds, targetMs);
    refill(sizer, clock);
    await clock.advance(12_000);
    // Storage is down: refills are proposed but never recorded, one every 100 ms.
    for (let i = 0; i < 10; i++) {
      expect(sizer.propose()).toBe(10);
      await clock.advance(100);
    }
    expect(refill(sizer, clock)).toBe(10);
  });
});
