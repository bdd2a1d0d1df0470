/**
 * Every failure the client reports is a `TallyhoError`. Answers in `application/problem+json` keep
 * the server's `code` — one of `ValidationFailed`, `PayloadTooLarge`, `UnsupportedMediaType`,
 * `NotFound`, `Conflict`, `PreconditionFailed`, `Unauthorized`, `Forbidden`, `TooManyRequests`,
 * `ConcurrencyExhausted`, `DependencyUnavailable`, `CorruptState`, `ConfigurationInvalid`,
 * `Internal` (`ServerErrorCode`, generated from the OpenAPI document; a test holds this list to it) —
 * and the whole problem document; what never reached an answer, or was answered without a problem
 * document of Tallyho's, gets a client-side code: `Timeout`, `Network`, `HttpError`, `BadResponse`,
 * `Closed`, `Credential` (the token credential gave no token; its error is the `cause`).
 */
import { problemCodes } from './generated/openapi.js';
import type { Problem } from './types.js';

/** The codes of the server's problem documents. */
export type ServerErrorCode = Problem['code'];

/** Codes the client itself assigns when there is no problem document. */
export type ClientErrorCode = 'Timeout' | 'Network' | 'HttpError' | 'BadResponse' | 'Closed' | 'Credential';

export type TallyhoErrorCode = ServerErrorCode | ClientErrorCode;

const serverCodes: ReadonlySet<string> = new Set(problemCodes);

/** Whether `code` is one the server's problem documents use. */
export function isServerErrorCode(code: string): code is ServerErrorCode {
  return serverCodes.has(code);
}

export interface TallyhoErrorInit {
  readonly status?: number;
  readonly problem?: Problem;
  readonly request?: string;
  readonly retryAfterMs?: number;
  readonly cause?: unknown;
}

export class TallyhoError extends Error {
  override readonly name = 'TallyhoError';
  /** The server's problem `code`, or a `ClientErrorCode`. */
  readonly code: TallyhoErrorCode;
  /** HTTP status; 0 when no answer arrived. */
  readonly status: number;
  readonly problem: Problem | undefined;
  /** `METHOD path` of the request that failed. */
  readonly request: string | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(code: TallyhoErrorCode, message: string, init: TallyhoErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = code;
    this.status = init.status ?? 0;
    this.problem = init.problem;
    this.request = init.request;
    this.retryAfterMs = init.retryAfterMs;
  }
}

/**
 * True for a `TallyhoError`, also one made by another copy of this package (two versions in one
 * bundle, or one loaded as ESM and one bundled), which `instanceof` does not recognise: it is
 * matched by `name` and the shape of its fields, as the Azure SDK's `isRestError` does.
 */
export function isTallyhoError(err: unknown, code?: TallyhoErrorCode): err is TallyhoError {
  const like =
    err instanceof TallyhoError ||
    (err instanceof Error &&
      err.name === 'TallyhoError' &&
      typeof (err as { code?: unknown }).code === 'string' &&
      typeof (err as { status?: unknown }).status === 'number');
  return like && (code === undefined || (err as TallyhoError).code === code);
}
