/**
 * The one error type of the app. Every failure a caller can see is an `AppError` with a code from
 * this union; storage errors are translated into it in `shared/storage/errors.ts` and it is turned
 * into `application/problem+json` in exactly one place (`toProblem`).
 */
export type AppErrorCode =
  /** The request is malformed: bad JSON, a field out of range, an illegal name. Nothing was changed. */
  | 'ValidationFailed'
  /** The request body is larger than the endpoint accepts. Nothing was changed. */
  | 'PayloadTooLarge'
  /** The request body is not JSON (its Content-Type is not application/json). Nothing was changed. */
  | 'UnsupportedMediaType'
  /** The named resource does not exist. */
  | 'NotFound'
  /** The resource exists with a different configuration, or the operation conflicts with its state. */
  | 'Conflict'
  /** A conditional request (If-Match) named a version that is no longer current. */
  | 'PreconditionFailed'
  /** The caller must authenticate. */
  | 'Unauthorized'
  /** The caller is authenticated but not allowed to do this. */
  | 'Forbidden'
  /** The caller is sending faster than the resource accepts; retry after the advertised delay. */
  | 'TooManyRequests'
  /** Optimistic-concurrency retries ran out under contention; retry after the advertised delay. */
  | 'ConcurrencyExhausted'
  /** Storage (or another dependency) is unreachable, throttling or timing out; retry later. */
  | 'DependencyUnavailable'
  /** Stored state cannot be interpreted (non-numeric, negative, missing fields). Needs an operator. */
  | 'CorruptState'
  /** A setting is missing or malformed. Needs an operator. */
  | 'ConfigurationInvalid'
  /** A bug or an unexpected failure. */
  | 'Internal';

interface CodeTraits {
  readonly status: number;
  readonly title: string;
  readonly retryable: boolean;
}

const traits: Record<AppErrorCode, CodeTraits> = {
  ValidationFailed: { status: 400, title: 'The request is not valid', retryable: false },
  PayloadTooLarge: { status: 413, title: 'The request body is too large', retryable: false },
  UnsupportedMediaType: { status: 415, title: 'Unsupported media type', retryable: false },
  NotFound: { status: 404, title: 'Not found', retryable: false },
  Conflict: { status: 409, title: 'Conflict', retryable: false },
  PreconditionFailed: { status: 412, title: 'Precondition failed', retryable: false },
  Unauthorized: { status: 401, title: 'Unauthorized', retryable: false },
  Forbidden: { status: 403, title: 'Forbidden', retryable: false },
  TooManyRequests: { status: 429, title: 'Too many requests', retryable: true },
  ConcurrencyExhausted: { status: 503, title: 'Too much contention, try again', retryable: true },
  DependencyUnavailable: { status: 503, title: 'A dependency is unavailable', retryable: true },
  CorruptState: { status: 500, title: 'Stored state is corrupt', retryable: false },
  ConfigurationInvalid: { status: 500, title: 'The app is misconfigured', retryable: false },
  Internal: { status: 500, title: 'Internal error', retryable: false },
};

/** Every code, in the union's order: the OpenAPI document lists them as Problem.code's values. */
export const appErrorCodes = Object.keys(traits) as readonly AppErrorCode[] as readonly [AppErrorCode, ...AppErrorCode[]];

/** One problem with one field of a request, as reported in a 400. */
export interface FieldIssue {
  readonly path: string;
  readonly message: string;
}

export interface AppErrorOptions {
  readonly cause?: unknown;
  /** Seconds the caller should wait before retrying (sent as `Retry-After`). */
  readonly retryAfterSeconds?: number;
  readonly issues?: readonly FieldIssue[];
  /** Extra members for the problem document (e.g. the conflicting settings). */
  readonly extra?: Readonly<Record<string, unknown>>;
  /** What happened in terms a caller must not see (keys, addresses, paths): logged, never sent. */
  readonly internal?: string;
}

export class AppError<C extends AppErrorCode = AppErrorCode> extends Error {
  override readonly name = 'AppError';
  readonly code: C;
  readonly status: number;
  readonly retryable: boolean;
  readonly retryAfterSeconds: number | undefined;
  readonly issues: readonly FieldIssue[];
  readonly extra: Readonly<Record<string, unknown>>;
  readonly internal: string | undefined;

  constructor(code: C, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    const t = traits[code];
    this.code = code;
    this.status = t.status;
    this.retryable = t.retryable;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.issues = options.issues ?? [];
    this.extra = options.extra ?? {};
    this.internal = options.internal;
  }
}

/** Checks the name too, so an error that crossed a module or realm boundary still counts. */
export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError || (err instanceof Error && err.name === 'AppError' && 'code' in err);
}

/**
 * Whether a queue message that failed with `err` is done with rather than delivered again: a failure
 * the message itself causes — an AppError that is not retryable and not a server fault (a forged or
 * malformed message: 4xx) — which no redelivery changes. A retryable failure, a server fault (5xx: a
 * blob gone missing, a processor a rolling deployment is still bringing) and anything unexpected go
 * back to the queue, and reach its poison queue only after the host's maxDequeueCount deliveries.
 */
export function endsMessage(err: unknown): err is AppError {
  return isAppError(err) && !err.retryable && err.status < 500;
}

export function validationError(message: string, issues: readonly FieldIssue[] = []): AppError<'ValidationFailed'> {
  return new AppError('ValidationFailed', message, { issues });
}

/** Anything thrown, as an AppError: unknown errors become `Internal` and keep the original as cause. */
export function toAppError(err: unknown): AppError {
  if (isAppError(err)) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new AppError('Internal', message, { cause: err });
}

export const problemContentType = 'application/problem+json';

/** RFC 9457 problem details. `code` and `issues` are extension members. */
export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly code: AppErrorCode;
  readonly issues?: readonly FieldIssue[];
  readonly [extension: string]: unknown;
}

function problemType(code: AppErrorCode): string {
  return `urn:tallyho:problem:${code}`;
}

/**
 * What a client is told of a server fault instead of the error's own message, which may name table
 * keys, blob paths, hosts or stack frames; the route logs the message (shared/http/route.ts).
 */
const serverFaultDetails: Partial<Record<AppErrorCode, string>> = {
  Internal: 'The server failed to handle the request. The failure has been logged.',
  CorruptState: 'Stored state cannot be interpreted; it was left unchanged. The log has the details.',
  ConfigurationInvalid: 'A setting of the app is missing or malformed. The log names it.',
};

/** The problem document for an error. A 500 carries a generic detail and no extras (see serverFaultDetails). */
export function toProblem(err: AppError, instance?: string): Problem {
  const t = traits[err.code];
  const fault = serverFaultDetails[err.code];
  return {
    ...(fault === undefined ? err.extra : {}),
    type: problemType(err.code),
    title: t.title,
    status: err.status,
    detail: fault ?? err.message,
    code: err.code,
    ...(err.issues.length > 0 ? { issues: err.issues } : {}),
    ...(instance === undefined ? {} : { instance }),
  };
}
