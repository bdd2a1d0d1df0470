/**
 * The one convention for work that finishes after the answer (docs/http-api.md#long-running-operations):
 * 202 Accepted, `Location` naming the operation's status route, `Retry-After` with the seconds a
 * poller should wait before reading it, and the same status route as `statusUri` in the body, so a
 * client that only reads bodies finds it too. Every 202 of the API is built here: `json()` refuses
 * 202 and `defineRoute` refuses a documented 202 that was not made by `acceptedResponse`.
 */
import * as z from 'zod';

import { type HttpResult, jsonResult } from './responses';

const statusUriField = z
  .string()
  .meta({ description: "The operation's status route (GET): read it until the operation is done. Also sent as Location." });

/** `schema` with the status route added: the body of a 202, as its own component named `id`. */
export function acceptedSchema<S extends z.ZodObject>(schema: S, id: string, description?: string) {
  return schema.extend({ statusUri: statusUriField }).meta({ id, ...(description === undefined ? {} : { description }) });
}

interface AcceptedHeaderDoc {
  readonly name: string;
  readonly description: string;
}

/** The headers every 202 documents; `defineRoute` knows a 202 made here by this very array. */
export const acceptedHeaders: readonly AcceptedHeaderDoc[] = [
  { name: 'Location', description: "The operation's status route (the same as `statusUri`)." },
  { name: 'Retry-After', description: 'Seconds to wait before reading the status route.' },
];

/** The documentation of a 202: its body (made by `acceptedSchema`) and the two headers every 202 carries. */
export function acceptedResponse(description: string, schema: ReturnType<typeof acceptedSchema>) {
  return { description, schema, headers: acceptedHeaders };
}

/** A 202 for work still under way, read at `statusUri` (an app-relative path such as `/api/jobs/…`) after `retryAfterSeconds`. */
export function acceptedResult(
  body: object,
  statusUri: string,
  retryAfterSeconds: number,
  headers: Readonly<Record<string, string>> = {},
): HttpResult {
  return jsonResult(
    202,
    { ...body, statusUri },
    { ...headers, location: statusUri, 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
  );
}
