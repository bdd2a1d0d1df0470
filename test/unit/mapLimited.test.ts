import { mapLimited } from '../../shared/mapLimited';

describe('mapLimited', () => {
  it('keeps the input order whatever order the calls finish in', async () => {
    const delays = [30, 5, 20, 0, 10];
    const out = await mapLimited(delays, 3, async (ms) => {
      await new Promise((resolve) => setTimeout(resolve, ms));
      return ms * 2;
    });
    expect(out).toEqual([60, 10, 40, 0, 20]);
  });

  it('never has more than the limit in flight, and uses all of it', async () => {
    let inFlight = 0;
    let peak = 0;
    await mapLimited(
      Array.from({ length: 20 }, (_, i) => i),
      4,
      async () => {
        inFlight++;
        peak = Math.max(peak, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 2));
        inFlight--;
      },
    );
    expect(peak).toBe(4);
  });

  it('rejects with the first failure', async () => {
    await expect(mapLimited([1, 2, 3], 2, (n) => (n === 2 ? Promise.reject(new Error('boom 2')) : Promise.resolve(n)))).rejects.toThrow(
      'boom 2',
    );
  });

  it('returns an empty array for no items without calling fn', async () => {
    const fn = jest.fn((n: number) => Promise.resolve(n));
    await expect(mapLimited([], 8, fn)).resolves.toEqual([]);
    expect(fn).not.toHaveBeenCalled();
  });
});
