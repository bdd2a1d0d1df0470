/**
 * What a failed call to a webhook may tell whom. The endpoint is the operator's (allow-listed), so
 * its error pages, and the resolver's or socket's error text, are operators' to read: callers —
 * a schedule's reader, a job's submitter — see `HTTP <status>` or a fixed phrase, and the whole
 * answer goes to the log (and, for schedules, to admin-level readers). Schedule runs and the jobs'
 * pusher both describe failures here, so neither can show more than the other.
 */

export interface WebhookFailure {
  /** What a caller may read: `HTTP <status>` or a fixed phrase. */
  readonly reason: string;
  /** What only operators read (the log, admin-level views): the answer's start, or the error. */
  readonly detail: string;
}

/** Characters of an answer kept for operators. */
const detailChars = 200;

/** The endpoint answered a status that is a failure. */
export function failedAnswer(status: number, body: string): WebhookFailure {
  return { reason: `HTTP ${status}`, detail: body.slice(0, detailChars) };
}

/** The endpoint answered 2xx with something other than what it should have (not JSON, not a results document). */
export function unusableAnswer(status: number, what: string, body: string): WebhookFailure {
  return { reason: `HTTP ${status}: ${what}`, detail: body.slice(0, detailChars) };
}

/** The call did not get an answer: DNS, connection, TLS or timeout. */
const unreachablePhrase = 'The endpoint could not be reached';

export function unreachable(err: unknown): WebhookFailure {
  return { reason: unreachablePhrase, detail: (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '' };
}

/** The stored form an admin-level reader sees whole: `<reason>: <detail>` (the reason alone when there is no detail). */
export function storedReason(failure: WebhookFailure): string {
  return failure.detail === '' ? failure.reason : `${failure.reason}: ${failure.detail}`;
}

/** The part of a stored reason a caller may read (the inverse of storedReason for `HTTP <status>` reasons). */
export function callerReason(stored: string): string {
  if (stored.startsWith(unreachablePhrase)) return unreachablePhrase;
  return /^HTTP \d{3}/.exec(stored)?.[0] ?? stored;
}
