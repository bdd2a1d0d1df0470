/** The `Idempotency-Key` request header, validated like any other input (400 naming the header). */
import { validationError } from '../errors';
import type { HeaderReader } from './route';
import { zodIssues } from './route';
import { idempotencyKey } from './schemas';

/** The key, or undefined when the header is absent. */
export function readIdempotencyKey(headers: HeaderReader): string | undefined {
  const value = headers.get('idempotency-key');
  if (value === null) return undefined;
  const parsed = idempotencyKey.safeParse(value);
  if (!parsed.success) throw validationError('The Idempotency-Key header is not valid', zodIssues(parsed.error, 'headers.Idempotency-Key'));
  return parsed.data;
}
