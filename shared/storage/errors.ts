/**
 * The one place storage failures are interpreted. Callers that expect a status (404 on a read,
 * 409 on insert-if-absent, 412 on a conditional write) test for it with `hasStatus`; everything
 * else goes through `translateStorageError` and becomes an AppError.
 */
import { AppError, isAppError } from '../errors';

const transientNetworkCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ESOCKETTIMEDOUT',
  'REQUEST_SEND_ERROR',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

interface ErrorFields {
  readonly statusCode?: unknown;
  readonly code?: unknown;
  readonly name?: unknown;
  readonly cause?: unknown;
}

export function statusOfError(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const status = (err as ErrorFields).statusCode;
  return typeof status === 'number' ? status : undefined;
}

export function hasStatus(err: unknown, status: number): boolean {
  return statusOfError(err) === status;
}

/** True for failures where the request may or may not have reached storage: retrying may help. */
export function isTransientStorageError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, name, cause } = err as ErrorFields;
  const status = statusOfError(err);
  if (status !== undefined) return status === 408 || status === 429 || (status >= 500 && status !== 501 && status !== 505);
  if (name === 'AbortError' || name === 'TimeoutError') return true;
  if (typeof code === 'string' && transientNetworkCodes.has(code)) return true;
  return cause !== undefined && cause !== err && isTransientStorageError(cause);
}

/** Seconds a caller should wait before retrying a throttled or unavailable dependency. */
export const dependencyRetryAfterSeconds = 2;

/**
 * The AppError for a storage failure. Its message is what a caller sees, so it names neither the
 * operation (table keys, blob paths) nor the network error (addresses, ports): those go in
 * `internal`, which the HTTP layer logs.
 */
export function translateStorageError(err: unknown, doing: string): AppError {
  if (isAppError(err)) return err;
  const status = statusOfError(err);
  const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
  const internal = `Storage failed while ${doing}: ${message}`;
  if (status === 404) return new AppError('NotFound', 'Not found', { cause: err, internal });
  if (status === 409) return new AppError('Conflict', 'Conflict with the stored state', { cause: err, internal });
  if (status === 412) return new AppError('PreconditionFailed', 'Changed concurrently; read it again and retry', { cause: err, internal });
  if (isTransientStorageError(err)) {
    return new AppError('DependencyUnavailable', 'Storage is unavailable; try again shortly', {
      cause: err,
      internal: `${internal} (${status ?? 'no status'})`,
      retryAfterSeconds: dependencyRetryAfterSeconds,
    });
  }
  return new AppError('Internal', internal, { cause: err, internal });
}
