/**
 * Optimistic-concurrency retries. The SDKs retry throttling and 5xx themselves but never 409/412:
 * losing a conditional write is ours to handle. Back-off is a pure function of the attempt so it can
 * be tested exhaustively; the loop is bounded by attempts and by elapsed time.
 */
import type { Clock, Random } from './clock';
import { AppError } from './errors';
import type { Logger } from './log';
import { group, int, type SettingsOf } from './settings';

/** The app-wide bounds of every optimistic-concurrency loop (shared/settings.ts explains the declarations). */
export const occSettings = group({
  maxAttempts: int('TALLYHO_OCC_MAX_ATTEMPTS', 12, 1, 100, 'optimistic-concurrency attempts before a 503 `ConcurrencyExhausted`'),
  maxWaitMs: int('TALLYHO_OCC_MAX_WAIT_MS', 5000, 10, 120_000, 'time budget for those attempts'),
});

export type OccSettings = SettingsOf<typeof occSettings>;

export interface BackoffPolicy {
  /** Delay cap for the first retry. */
  readonly baseMs: number;
  /** No single delay exceeds this. */
  readonly maxDelayMs: number;
  /** Attempts in all, the first included. */
  readonly maxAttempts: number;
  /** Give up once this much time has passed since the first attempt. */
  readonly maxElapsedMs: number;
}

export const defaultBackoff: BackoffPolicy = { baseMs: 5, maxDelayMs: 500, maxAttempts: 12, maxElapsedMs: 5000 };

/** The default back-off within the app's bounds (TALLYHO_OCC_MAX_ATTEMPTS, TALLYHO_OCC_MAX_WAIT_MS). */
export function occBackoff(bounds: OccSettings): BackoffPolicy {
  return { ...defaultBackoff, maxAttempts: bounds.maxAttempts, maxElapsedMs: bounds.maxWaitMs };
}

/**
 * "Full jitter" exponential back-off: uniform in [0, min(max, base·2^retry)]. Spreading retries
 * over the whole window is what stops contenders that lost together from colliding again.
 * `retry` is 0 for the first retry.
 */
export function backoffDelay(retry: number, policy: BackoffPolicy, random: Random): number {
  const cap = Math.min(policy.maxDelayMs, policy.baseMs * 2 ** Math.min(retry, 30));
  return Math.floor(random() * (cap + 1));
}

/** Thrown by an attempt to say "I lost a race; re-read and try again". */
export class LostRace extends Error {
  override readonly name = 'LostRace';
}

export interface RetryContext {
  readonly clock: Clock;
  readonly random: Random;
  readonly policy: BackoffPolicy;
  readonly logger: Logger;
  /** Names the contended thing in logs and errors, e.g. `sequence orders`. */
  readonly subject: string;
  /** Counts lost races, for statistics. */
  readonly onLostRace?: () => void;
}

/**
 * Runs `attempt` until it returns. An attempt signals a lost race by throwing `LostRace`; any other
 * error ends the loop at once. When attempts or time run out, fails with `ConcurrencyExhausted`
 * (a 503 with `Retry-After`): nothing was written by the losing attempts.
 */
export async function retryLostRaces<T>(ctx: RetryContext, attempt: (n: number) => Promise<T>): Promise<T> {
  const started = ctx.clock.now();
  for (let n = 0; ; n++) {
    try {
      return await attempt(n);
    } catch (err) {
      if (!(err instanceof LostRace)) throw err;
      ctx.onLostRace?.();
      const elapsed = ctx.clock.now() - started;
      const delay = backoffDelay(n, ctx.policy, ctx.random);
      if (n + 1 >= ctx.policy.maxAttempts || elapsed + delay > ctx.policy.maxElapsedMs) {
        ctx.logger.log('warn', 'occ.retries_exhausted', { subject: ctx.subject, attempts: n + 1, elapsedMs: elapsed });
        throw new AppError('ConcurrencyExhausted', `Too much contention on ${ctx.subject}; try again`, {
          retryAfterSeconds: 1,
          cause: err,
        });
      }
      ctx.logger.log('debug', 'occ.retry', { subject: ctx.subject, attempt: n + 1, delayMs: delay });
      await ctx.clock.sleep(delay);
    }
  }
}

/** The retry context of a capability's runtime (its clock, random source, logger and back-off). */
export function retryContextOf(
  runtime: { readonly clock: Clock; readonly random: Random; readonly logger: Logger; readonly backoff: BackoffPolicy },
  subject: string,
  onLostRace?: () => void,
): RetryContext {
  const { clock, random, logger, backoff } = runtime;
  return { clock, random, logger, policy: backoff, subject, ...(onLostRace === undefined ? {} : { onLostRace }) };
}
