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

/** Any JSON answer; routes use `json`, and a 202 is made by ./operation.ts. */
export function jsonResult(status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): HttpResult {
  return { status, jsonBody: body, headers: { 'content-type': 'application/json', ...headers } };
}

/** A JSON answer other than 202: a 202 must carry the status route (acceptedResult in ./operation.ts). */
export function json(status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): HttpResult {
  if (status === 202) throw new Error('A 202 is answered with acceptedResult (shared/http/operation.ts)');
  return jsonResult(status, body, headers);
}

export function problemResult(err: AppError, instance?: string): HttpResult {
  const headers: Record<string, string> = { 'content-type': problemContentType };
  if (err.retryAfterSeconds !== undefined) headers['retry-after'] = String(Math.max(1, Math.ceil(err.retryAfterSeconds)));
  return { status: err.status, headers, jsonBody: toProblem(err, instance) };
}
