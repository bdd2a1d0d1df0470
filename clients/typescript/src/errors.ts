/**
 * Every failure the client reports is a `TallyhoError`. Answers in `application/problem+json` keep
 * the server's `code` (e.g. `NotFound`, `Conflict`, `Unavailable`) and the whole problem document;
 * what never reached an answer gets a client-side code.
 */
import type { Problem } from './types.js';

/** Codes the client itself assigns when there is no problem document. */
export type ClientErrorCode = 'Timeout' | 'Network' | 'HttpError' | 'BadResponse' | 'Closed';

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
  readonly code: string;
  /** HTTP status; 0 when no answer arrived. */
  readonly status: number;
  readonly problem: Problem | undefined;
  /** `METHOD path` of the request that failed. */
  readonly request: string | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(code: string, message: string, init: TallyhoErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = code;
    this.status = init.status ?? 0;
    this.problem = init.problem;
    this.request = init.request;
    this.retryAfterMs = init.retryAfterMs;
  }
}

export function isTallyhoError(err: unknown, code?: string): err is TallyhoError {
  return err instanceof TallyhoError && (code === undefined || err.code === code);
}
