/**
 * An item's life on its way to a processor, the same for the three ways items travel (the in-app
 * work queues, a worker's lease, a push to a webhook): a delivery skips what an earlier one recorded,
 * an attempt that fails retryably comes back after the back-off of its next attempt while attempts
 * are left, and an item past its attempts fails with the reason. What differs is only how an
 * attempt is counted — an in-app item's retry is a new envelope carrying its attempt; a declared
 * processor's message counts the deliveries a worker received (see `countedBefore`), so a lease that
 * a worker took and let run out is an attempt too — and is the adapters' (./inApp.ts, ./leases.ts,
 * ./pusher.ts through the leases).
 */
import type { JobSettings } from '../settings';
import { type ResultStore } from '../ledger/resultStore';
import { isOwed } from '../ledger/results';
import { type RetryPolicy, retryDelaySeconds } from '../processors/processorDefinition';

/** How many attempts an item gets and how long it waits before each again. */
export interface AttemptRules {
  readonly maxAttempts: number;
  readonly retry: RetryPolicy;
}

/** The longest an in-app item waits before its next attempt. */
const maxInAppDelaySeconds = 7 * 24 * 3600;

/**
 * The in-app processors' rules: TALLYHO_JOBS_MAX_ATTEMPTS, and a first retry after
 * TALLYHO_JOBS_RETRY_DELAY_SECONDS that doubles per attempt.
 */
export function inAppRules(settings: Pick<JobSettings, 'maxAttempts' | 'retryDelaySeconds'>): AttemptRules {
  return {
    maxAttempts: settings.maxAttempts,
    retry: { delaySeconds: settings.retryDelaySeconds, multiplier: 2, maxDelaySeconds: maxInAppDelaySeconds },
  };
}

/** Seconds before attempt `attempt` (2 for the first retry). */
export function delayBefore(rules: AttemptRules, attempt: number): number {
  return retryDelaySeconds(rules.retry, attempt);
}

/** A retryable failure at `attempt` goes again while attempts are left; otherwise it is final. */
export function canRetry(rules: AttemptRules, attempt: number): boolean {
  return attempt < rules.maxAttempts;
}

/** An item that comes back past its last attempt (a lease that ran out, a completion that left it out). */
export function isSpent(rules: AttemptRules, attempt: number): boolean {
  return attempt > rules.maxAttempts;
}

/**
 * Deliveries of one message that no worker used (no extension, no completion) and that are still
 * not counted. A long poll whose caller has gone looks like any other to the server, so the batch it
 * takes is such a delivery; past this many, a batch that ends its worker before it can use the
 * lease (a crash on receipt) counts again, and runs out of attempts as any other.
 */
export const maxUnusedDeliveries = 5;

/**
 * How many of a message's deliveries before delivery `delivery` count as attempts, given how many of
 * them a worker used (extended or completed its lease): every used one, and the unused ones past
 * `maxUnusedDeliveries`.
 */
export function countedBefore(delivery: number, usedBefore: number): number {
  const before = Math.max(0, delivery - 1);
  return before - Math.min(before - Math.min(usedBefore, before), maxUnusedDeliveries);
}

/** The reason an item fails with once its attempts are spent. */
export function gaveUp(reason: string, attempts: number): string {
  return `${reason} (gave up after ${attempts} attempts)`;
}

/** The items a delivery still owes a result: what an earlier delivery (or a duplicate) recorded is skipped. */
export async function owedItems<T extends { readonly id: string }>(
  results: ResultStore,
  jobId: string,
  round: number,
  items: readonly T[],
): Promise<readonly T[]> {
  const rows = await results.readRows(
    jobId,
    items.map((item) => item.id),
  );
  return items.filter((item) => isOwed(rows.get(item.id), round));
}
