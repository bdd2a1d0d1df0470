/**
 * What the two-caller property tests (test/e2e/twoCallersProperty.test.ts over jobs,
 * test/e2e/twoCallersPools.test.ts over the other capabilities) share: two fresh credentialed
 * callers per run (keys mode: each request also carries the function key) and requests as one of
 * them or as the admin.
 */
import { issueCredential } from '../../../shared/identity/credentials';
import { type E2eHost, startE2eHost } from './harness';

export type Who = 'a' | 'b';
export const other = (who: Who): Who => (who === 'a' ? 'b' : 'a');

export interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

/** A request with `headers` (a caller's); the body as JSON, an empty answer as `{}`. */
export async function sendAs(
  host: E2eHost,
  headers: Readonly<Record<string, string>>,
  method: string,
  path: string,
  body?: unknown,
): Promise<Answer> {
  const res = await fetch(host.url(path), {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

/** The master key's request; anything but a success throws. */
export async function asAdmin(host: E2eHost, method: string, path: string, body?: unknown): Promise<Answer> {
  const answer = await sendAs(host, { 'x-functions-key': host.keys.admin ?? '' }, method, path, body);
  if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer;
}

/** A submitter's request headers: the function key and a credential naming `name` (caller id `cred:<name>`). */
export async function submitterHeaders(host: E2eHost, key: Buffer, name: string): Promise<Record<string, string>> {
  const { credential } = await issueCredential(key, { name, roles: { admin: false, submitter: true, workerOf: [] } });
  return { 'x-functions-key': host.keys.function ?? '', authorization: `Bearer ${credential}` };
}

/** The list's `pick`-th element, round and round; undefined for an empty list. */
export const nth = <T>(list: readonly T[], pick: number): T | undefined => (list.length === 0 ? undefined : list[pick % list.length]);

/** A host of the test file's own that takes Tallyho credentials signed with `key`, with the file's settings. */
export function startCredentialedHost(key: Buffer, env: Record<string, string>): Promise<E2eHost> {
  return startE2eHost({ env: { TALLYHO_CREDENTIALS_KEY: key.toString('base64'), ...env } });
}
