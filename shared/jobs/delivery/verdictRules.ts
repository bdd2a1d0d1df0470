/**
 * A completion's results against its lease, before anything is written: each must name an item of
 * the lease, once (a 400 names the result), and which of them are final — a retry past the item's
 * last attempt is, failed `retriesExhausted`. No I/O here: the completion that acts on them is
 * ./leases.ts; the body's schema is ./verdicts.ts.
 */
import { validationError } from '../../errors';
import type { Signer } from '../../signing/signer';
import type { JsonValue } from '../envelopes/envelope';
import { type ItemResult, maxOutputChars, maxReasonChars } from '../ledger/results';
import type { DeclaredProcessor } from '../processors/processorDefinition';
import { canRetry, gaveUp } from './itemAttempts';
import { rulesOf } from './leaseTerms';
import { type Lease, leaseEntry } from './leaseId';

export type ItemVerdict =
  | { readonly id: string; readonly status: 'succeeded'; readonly output?: JsonValue }
  | { readonly id: string; readonly status: 'failed'; readonly code: string; readonly reason: string }
  | { readonly id: string; readonly status: 'retry'; readonly reason: string };

/** Checks every verdict names an item of the lease, once; the 400 names the result and the item. */
export function checkVerdicts(lease: Lease, verdicts: readonly ItemVerdict[], signer: Signer, maxItems: number): void {
  const seen = new Set<string>();
  const issues = verdicts.flatMap((v, i) => {
    if (seen.has(v.id)) return [{ path: `body.results.${i}.id`, message: `"${v.id}" has a result earlier in the list` }];
    seen.add(v.id);
    if (leaseEntry(signer, lease, v.id) === undefined)
      return [{ path: `body.results.${i}.id`, message: `"${v.id}" is not an item of this lease` }];
    if (v.status === 'succeeded' && JSON.stringify(v.output ?? null).length > maxOutputChars) {
      return [{ path: `body.results.${i}.output`, message: `larger than ${maxOutputChars} characters of JSON` }];
    }
    return [];
  });
  if (issues.length > 0) throw validationError('The results do not fit the lease', issues.slice(0, 20));
  if (verdicts.length > maxItems) throw validationError('Too many results', []);
}

/** The final results among a completion's verdicts, and the highest attempt of those that come back. */
export function finalsOf(
  lease: Lease,
  verdicts: readonly ItemVerdict[],
  signer: Signer,
  processor: DeclaredProcessor,
): { finals: ItemResult[]; retryAttempt: number } {
  const rules = rulesOf(processor);
  const finals: ItemResult[] = [];
  let retryAttempt = 0;
  for (const v of verdicts) {
    const entry = leaseEntry(signer, lease, v.id) as { attempt: number; claimCheck: boolean };
    const common = { id: v.id, attempts: entry.attempt, envelope: lease.envelope, claimCheck: entry.claimCheck };
    if (v.status === 'succeeded') finals.push({ ...common, status: 'succeeded', output: v.output ?? null });
    else if (v.status === 'failed') finals.push({ ...common, status: 'failed', code: v.code, reason: v.reason.slice(0, maxReasonChars) });
    else if (!canRetry(rules, entry.attempt))
      finals.push({
        ...common,
        status: 'failed',
        code: 'retriesExhausted',
        reason: gaveUp(v.reason, entry.attempt).slice(0, maxReasonChars),
      });
    else retryAttempt = Math.max(retryAttempt, entry.attempt);
  }
  return { finals, retryAttempt };
}
