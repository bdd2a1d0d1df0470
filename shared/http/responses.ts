/** Response helpers. Errors become `application/problem+json` here and nowhere else. */
import { type AppError, problemContentType, toProblem } from '../errors';

/** What a route answers; assignable to the Functions library's HttpResponseInit. */
type ResponseBody = string | Uint8Array | AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>;

export interface HttpResult {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly jsonBody?: unknown;
  readonly body?: ResponseBody;
}

export function json(status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): HttpResult {
  return { status, jsonBody: body, headers: { 'content-type': 'application/json', ...headers } };
}

export function problemResult(err: AppError, instance?: string): HttpResult {
  const headers: Record<string, string> = { 'content-type': problemContentType };
  if (err.retryAfterSeconds !== undefined) headers['retry-after'] = String(Math.max(1, Math.ceil(err.retryAfterSeconds)));
  return { status: err.status, headers, jsonBody: toProblem(err, instance) };
}
