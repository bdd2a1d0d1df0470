import { ManualClock, seededRandom } from '../../../shared/clock';
import { loadAppConfig } from '../../../shared/app/settings';
import { isAppError } from '../../../shared/errors';
import { MemoryLogger } from '../../../shared/log';
import { backoffDelay, LostRace, retryLostRaces } from '../../../shared/retry';
import { occBackoff } from '../../../shared/retry';

const env = { AzureWebJobsStorage: 'UseDevelopmentStorage=true' };

describe('sequence back-off policy', () => {
  it('takes its attempt and time bounds from the OCC settings', () => {
    expect(occBackoff(loadAppConfig(env).occ)).toMatchObject({ maxAttempts: 12, maxElapsedMs: 5000 });
    const tuned = loadAppConfig({ ...env, TALLYHO_OCC_MAX_ATTEMPTS: '4', TALLYHO_OCC_MAX_WAIT_MS: '250' });
    expect(occBackoff(tuned.occ)).toMatchObject({ maxAttempts: 4, maxElapsedMs: 250 });
  });

  it('draws every delay from [0, min(max, base·2^retry)] with full jitter (seeded)', () => {
    const policy = occBackoff(loadAppConfig(env).occ);
    const random = seededRandom(42);
    for (let retry = 0; retry < 12; retry++) {
      const cap = Math.min(policy.maxDelayMs, policy.baseMs * 2 ** retry);
      const delays = Array.from({ length: 200 }, () => backoffDelay(retry, policy, random));
      expect(Math.min(...delays)).toBeGreaterThanOrEqual(0);
      expect(Math.max(...delays)).toBeLessThanOrEqual(cap);
      // Spread over the window, not bunched: contenders that lost together must not collide again.
      if (cap >= 20) expect(new Set(delays).size).toBeGreaterThan(10);
    }
  });

  it('gives up after the attempt bound with a 503 that says when to retry, on a fake clock', async () => {
    const clock = new ManualClock();
    const logger = new MemoryLogger();
    const policy = { ...occBackoff(loadAppConfig(env).occ), maxAttempts: 5, maxElapsedMs: 60_000 };
    let attempts = 0;
    const outcome = retryLostRaces({ clock, random: seededRandom(1), policy, logger, subject: 'sequence orders' }, () => {
      attempts++;
      return Promise.reject(new LostRace('412'));
    }).catch((err: unknown) => err);
    while (clock.pendingSleeps > 0 || attempts < 5) await clock.advance(1000);
    const err = await outcome;
    expect(attempts).toBe(5);
    expect(isAppError(err) && err.code).toBe('ConcurrencyExhausted');
    expect(isAppError(err) && err.retryAfterSeconds).toBeGreaterThan(0);
    expect(logger.events('occ.retry')).toHaveLength(4);
    expect(logger.events('occ.retries_exhausted')).toEqual([expect.objectContaining({ subject: 'sequence orders', attempts: 5 })]);
  });

  it('gives up once the time budget would be exceeded, never sleeping past it', async () => {
    const clock = new ManualClock();
    const started = clock.now();
    const policy = { baseMs: 100, maxDelayMs: 100, maxAttempts: 1000, maxElapsedMs: 1000 };
    let lastAttemptAt = started;
    const outcome = retryLostRaces({ clock, random: () => 0.999, policy, logger: new MemoryLogger(), subject: 's' }, () => {
      lastAttemptAt = clock.now();
      return Promise.reject(new LostRace('412'));
    }).catch((err: unknown) => err);
    for (let i = 0; i < 50; i++) await clock.advance(100);
    const err = await outcome;
    expect(isAppError(err) && err.code).toBe('ConcurrencyExhausted');
    expect(lastAttemptAt - started).toBeLessThanOrEqual(policy.maxElapsedMs);
  });

  it('returns the first success after lost races', async () => {
    const clock = new ManualClock();
    let attempts = 0;
    const outcome = retryLostRaces(
      { clock, random: seededRandom(3), policy: occBackoff(loadAppConfig(env).occ), logger: new MemoryLogger(), subject: 's' },
      (n) => {
        attempts++;
        return n < 3 ? Promise.reject(new LostRace('412')) : Promise.resolve(n);
      },
    );
    while (attempts < 4) await clock.advance(100);
    await expect(outcome).resolves.toBe(3);
  });
});
