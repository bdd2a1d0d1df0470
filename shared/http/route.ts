/**
 * An HTTP endpoint defined once: method, path, auth level, the zod schemas its input is validated
 * with, its documented responses and its handler. The same definition registers the function
 * (functions/), validates every request (here) and generates the OpenAPI document (shared/openapi),
 * so the contract cannot drift from the code.
 *
 * Nothing here imports @azure/functions: `RequestLike` is the structural subset of its HttpRequest
 * that we read, and `HttpResult` is assignable to its HttpResponseInit.
 */
import type * as z from 'zod';

import type { DurableClient } from '../durable/client';
import { AppError, type FieldIssue, toAppError, validationError } from '../errors';
import { type ProcessorWorkers, requireRole, worksAll } from '../identity/access';
import type { Caller } from '../identity/caller';
import { type Hold, type HeldRequests, releasedAtEnd } from './held';
import type { CallerResolver } from '../identity/resolve';
import { defaultCallerResolver } from '../identity/resolvers';
import { jsonDeeperThan, maxJsonDepth } from '../jsonDepth';
import { createLogger, type Logger } from '../log';
import { pathParameterNames } from './routeTemplate';
import { type AuthLevel, authorizationOf, type RouteName } from './authorization';
import { acceptedHeaders } from './operation';
import { type HttpResult, problemResult } from './responses';

type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';

export type { AuthLevel } from './authorization';

export type { HeaderReader } from '../identity/caller';
import type { HeaderReader } from '../identity/caller';

export interface RequestLike {
  readonly method: string;
  readonly url: string;
  readonly headers: HeaderReader;
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  /** The body as it arrives (the Functions library's stream mode); `text()` when there is none. */
  readonly body?: ReadableStream<Uint8Array> | null;
  text(): Promise<string>;
}

export interface ResponseDoc {
  readonly description: string;
  readonly schema?: z.ZodType;
  /** Defaults to application/json (application/problem+json for 4xx/5xx). */
  readonly contentType?: string;
  /** Response headers worth documenting (a 202's Location and Retry-After, from ./operation.ts). */
  readonly headers?: readonly { readonly name: string; readonly description: string }[];
}

interface HeaderDoc {
  readonly name: string;
  readonly description: string;
  readonly required?: boolean;
}

interface RouteInput<P, Q, B> {
  readonly params: P;
  readonly query: Q;
  readonly body: B;
  readonly headers: HeaderReader;
  readonly url: URL;
  /**
   * Who is calling (shared/identity): resolved from what was authenticated before anything else of
   * the request is read, and already holding what the route's level asks (docs/security.md "Callers").
   */
  readonly caller: Caller;
  /** The Durable client of this invocation; only a route that declares `durable` has one. */
  readonly durable: () => DurableClient;
  /** Aborted when the client hangs up before the answer is complete (a long poll or event stream then ends). */
  readonly clientGone: AbortSignal;
}

interface RouteMeta {
  /** The function name; unique across the app, and its auth level is declared in ./authorization.ts. */
  readonly name: RouteName;
  readonly method: HttpMethod;
  /** Route template below the `api` prefix, e.g. `sequences/{name}/next`. */
  readonly path: string;
  /**
   * Registered for every method, not only `method` (the catch-all, ./notFound.ts). Such a route is no
   * operation of the API: the OpenAPI document leaves it out, and `method` is only what tests call it with.
   */
  readonly anyMethod?: true;
  readonly summary: string;
  readonly description?: string;
  readonly tags: readonly string[];
  readonly requestHeaders?: readonly HeaderDoc[];
  readonly responses: Readonly<Record<number, ResponseDoc>>;
  /** Largest body accepted, in bytes (413 above); the app-wide limit (TALLYHO_MAX_BODY_BYTES) may lower it. */
  readonly maxBodyBytes?: number;
  /** `maxBodyBytes` replaces the app-wide limit rather than lowering it (an endpoint that takes bulk input). */
  readonly ownBodyLimit?: true;
  /** The handler uses the Durable client of the invocation: the registration gives the function a `durableClient` input. */
  readonly durable?: true;
  /**
   * A long poll or an event stream: the request takes a place among TALLYHO_HTTP_MAX_HELD (./held.ts)
   * for as long as it is open, and `clientGone` also fires when a fairer share takes that place.
   */
  readonly holds?: true;
  /** Whether a request must carry a body; when false an empty body validates as `undefined`. */
  readonly bodyRequired?: boolean;
  /** Request bodies that must validate; used by the OpenAPI document and its tests. */
  readonly examples?: readonly unknown[];
}

export interface RouteSpec<PS extends z.ZodType, QS extends z.ZodType, BS extends z.ZodType> extends RouteMeta {
  /**
   * A `worker` route (./authorization.ts): the processor its request names, with the caller ids its
   * declaration names as workers; undefined when it names none that exists (the route answers 404).
   */
  readonly workerTarget?: (params: z.output<PS>) => Promise<ProcessorWorkers | undefined>;
  readonly params?: PS;
  readonly query?: QS;
  readonly body?: BS;
  handle(input: RouteInput<z.output<PS>, z.output<QS>, z.output<BS>>): Promise<HttpResult>;
}

interface RunOptions {
  readonly logger?: Logger;
  /** The app-wide body limit (TALLYHO_MAX_BODY_BYTES). */
  readonly maxBodyBytes?: number;
  /** The invocation's Durable client, for a route that declares `durable`. */
  readonly durable?: () => DurableClient;
  /** Aborted when the client hangs up (shared/http/clientGone.ts); never, when not given. */
  readonly clientGone?: AbortSignal;
  /**
   * The app's caller resolver (from its identity settings), asked for once the request is being
   * answered so a bad setting becomes this request's problem document. Without one: the default
   * settings' resolver (keys mode, no credentials), as in tests that run a route directly.
   */
  readonly callers?: () => CallerResolver;
  /** This instance's held requests (./held.ts), for a route that `holds`; none when not given (tests). */
  readonly held?: () => HeldRequests;
}

/** Runs a handler in its hold, if it has one: the hold ends with the answer, or a streamed body's end. */
async function handleHolding(
  handle: (clientGone: AbortSignal) => Promise<HttpResult>,
  clientGone: AbortSignal,
  hold: Hold | undefined,
): Promise<HttpResult> {
  if (hold === undefined) return handle(clientGone);
  try {
    const result = await handle(AbortSignal.any([clientGone, hold.ended]));
    if (result.body instanceof ReadableStream) return { ...result, body: releasedAtEnd(result.body, hold) };
    hold.release();
    return result;
  } catch (err) {
    hold.release();
    throw err;
  }
}

/** A route with its types erased, so routes of any shape can share one list. */
export interface RouteDefinition extends RouteMeta {
  /** From the authorization table, never from the route itself. */
  readonly auth: AuthLevel;
  readonly schemas: { readonly params?: z.ZodType; readonly query?: z.ZodType; readonly body?: z.ZodType };
  run(request: RequestLike, options?: RunOptions): Promise<HttpResult>;
}

const defaultMaxBodyBytes = 1024 * 1024;

export function zodIssues(error: z.ZodError, prefix: string): FieldIssue[] {
  return error.issues.map((issue) => ({
    path: [prefix, ...issue.path.map(String)].join('.'),
    message: issue.message,
  }));
}

function parsePart<S extends z.ZodType>(schema: S | undefined, value: unknown, part: string): z.output<S> {
  if (schema === undefined) return value as z.output<S>;
  const result = schema.safeParse(value);
  if (!result.success) throw validationError(`The request ${part} is not valid`, zodIssues(result.error, part));
  return result.data;
}

/** `application/json` or a `+json` type, parameters (charset) aside. */
function isJsonMediaType(contentType: string | null): boolean {
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type);
}

function tooLarge(bytes: string, limit: number): AppError {
  return new AppError('PayloadTooLarge', `The body is ${bytes} bytes; at most ${limit} are accepted`);
}

/**
 * The body as text, read no further than `limit` bytes: a chunked body (no Content-Length) is
 * counted while it arrives and refused at the first byte past the limit, so a 300 MiB upload to a
 * route that takes 1 KiB costs 1 KiB of reading and memory, not 300 MiB.
 */
async function readLimited(request: RequestLike, limit: number): Promise<string> {
  const declared = Number(request.headers.get('content-length') ?? '0');
  if (declared > limit) throw tooLarge(String(declared), limit);
  const stream = request.body;
  if (stream === undefined || stream === null) {
    const text = await request.text();
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > limit) throw tooLarge(String(bytes), limit);
    return text;
  }
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (bytes > limit) {
      // Stop reading; what the caller is still sending is left to the connection, never buffered.
      void reader.cancel().catch(() => undefined);
      throw tooLarge(`more than ${limit}`, limit);
    }
    chunks.push(value);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

async function readBody(request: RequestLike, limit: number, required: boolean, accepted: boolean): Promise<unknown> {
  const text = await readLimited(request, limit);
  if (text.trim() === '') {
    if (required) throw validationError('A JSON body is required', [{ path: 'body', message: 'Required' }]);
    return undefined;
  }
  // A body the endpoint would ignore is refused, so a caller learns its request is not what it meant.
  if (!accepted) throw validationError('This endpoint takes no body', [{ path: 'body', message: 'Must be empty' }]);
  // Only JSON is read as JSON: a text/plain or form POST is what a cross-site page can send
  // without a CORS preflight, so accepting it would let any web page drive the API.
  if (!isJsonMediaType(request.headers.get('content-type'))) {
    throw new AppError('UnsupportedMediaType', 'Send the body as application/json (Content-Type: application/json)');
  }
  // Depth before parsing and validation: z.json() recurses, so deep input would overflow the stack.
  if (jsonDeeperThan(text)) {
    throw validationError(`The body nests deeper than ${maxJsonDepth} levels`, [{ path: 'body', message: 'Too deeply nested' }]);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw validationError('The body is not valid JSON', [{ path: 'body', message: err instanceof Error ? err.message : 'Malformed JSON' }]);
  }
}

/**
 * The route values, read by the template's own names. In stream mode the real host hands the worker
 * its binding data as `params`: route values plus every query value and the top-level primitive
 * fields of a JSON body (devhost/docs/real-host.md#binding-data), in a case-insensitive
 * dictionary, so a name is matched without regard to case and nothing else is taken.
 */
function routeValues(names: readonly string[], params: Readonly<Record<string, string>>): Record<string, string> {
  const values: Record<string, string> = {};
  for (const name of names) {
    const key = Object.keys(params).find((k) => k.toLowerCase() === name.toLowerCase());
    if (key !== undefined) values[name] = params[key] as string;
  }
  return values;
}

/** The query as the app sees it: `code` is the host's key (README: `?code=`), never an app value. */
function appQuery(query: URLSearchParams): Record<string, string> {
  return Object.fromEntries([...query.entries()].filter(([key]) => key.toLowerCase() !== 'code'));
}

export function defineRoute<
  PS extends z.ZodType = z.ZodType<Record<string, never>>,
  QS extends z.ZodType = z.ZodType<Record<string, never>>,
  BS extends z.ZodType = z.ZodType<undefined>,
>(spec: RouteSpec<PS, QS, BS>): RouteDefinition {
  const schemas = {
    ...(spec.params === undefined ? {} : { params: spec.params }),
    ...(spec.query === undefined ? {} : { query: spec.query }),
    ...(spec.body === undefined ? {} : { body: spec.body }),
  };
  const names = pathParameterNames(spec.path);
  const accepted = spec.responses[202];
  if (accepted !== undefined && accepted.headers !== acceptedHeaders) {
    throw new Error(`Route ${spec.name} documents a 202 not made by acceptedResponse (shared/http/operation.ts)`);
  }
  const { level, role } = authorizationOf(spec.name);
  if ((role === 'worker') !== (spec.workerTarget !== undefined)) {
    throw new Error(`Route ${spec.name}: a worker route names its processor (workerTarget), and only a worker route does`);
  }
  return {
    ...spec,
    auth: level,
    schemas,
    async run(request, options = {}) {
      try {
        // Who is asking comes before any of the request is read: a refused caller costs no body.
        const caller = await (options.callers ?? defaultCallerResolver)().resolve(request.headers, level);
        // A worker route is decided with its processor (a declaration may name a caller that holds no role).
        if (role !== 'worker') requireRole(caller, role);
        const params = parsePart(spec.params, routeValues(names, request.params), 'params');
        // A worker of every processor needs no look at the one named (a cached read of its declaration otherwise).
        if (spec.workerTarget !== undefined && !worksAll(caller)) requireRole(caller, role, await spec.workerTarget(params));
        const query = parsePart(spec.query, appQuery(request.query), 'query');
        const appLimit = options.maxBodyBytes ?? defaultMaxBodyBytes;
        const limit = spec.ownBodyLimit === true ? (spec.maxBodyBytes ?? appLimit) : Math.min(spec.maxBodyBytes ?? Infinity, appLimit);
        const rawBody = await readBody(request, limit, spec.bodyRequired ?? false, spec.body !== undefined);
        const body = parsePart(spec.body, rawBody, 'body');
        const durable = (): DurableClient => {
          if (options.durable === undefined)
            throw new AppError('Internal', `Route ${spec.name} has no Durable client (declare durable: true)`);
          return options.durable();
        };
        const clientGone = options.clientGone ?? new AbortController().signal;
        const input = { params, query, body, headers: request.headers, url: new URL(request.url), caller, durable };
        const hold = spec.holds === true ? options.held?.().hold(caller.id) : undefined;
        return await handleHolding((held) => spec.handle({ ...input, clientGone: held }), clientGone, hold);
      } catch (err) {
        const appError = toAppError(err);
        // Server-side failures are logged with what their problem document leaves out.
        if (appError.status >= 500) {
          (options.logger ?? createLogger()).log('error', 'http.unhandled', {
            route: spec.name,
            code: appError.code,
            ...(appError.internal === undefined ? {} : { internal: appError.internal }),
            error: err instanceof Error ? (err.stack ?? err.message) : String(err),
          });
        }
        return problemResult(appError, new URL(request.url).pathname);
      }
    },
  };
}
