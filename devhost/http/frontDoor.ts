/**
 * The host's HTTP entry point: CORS preflights, host-level routes (admin API, extension webhooks),
 * then function routes under the route prefix with method and key checks, and finally the
 * invocation — buffered (`RpcHttpData` in, `RpcHttpData` out) or, when the app enabled HTTP
 * streaming, forwarded to the library's proxy. Unhandled errors answer a 500 with an empty body; the
 * log has the stack.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { types } from 'node:util';

import type { BindingIo } from '../bindings/bindingIo';
import { httpTriggerParams } from './bindingData';
import { type BindingData } from '../bindings/expressions';
import type { Invoker } from '../core/invoker';
import type { RpcParameterBinding } from '../core/types';
import type { HostLogger } from '../log';
import type { CorsPolicy } from './cors';
import type { FunctionRoutes, HttpRoute } from './functionRoutes';
import { KeyPolicy } from '../keys';
import { flatHeaders, flatQuery, type HttpRequestParts, streamTriggerMetadata, toRpcHttpRequest, writeRpcHttpResponse } from './rpcHttp';
import { bodyTooLarge, declaresTooMuch } from './bodyLimit';
import type { StreamProxy } from './streamProxy';
import type { RequestSpan, RequestTracing } from '../telemetry/requestSpans';
import { isDevhostError } from '../errors';

export type HostRouteHandler = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<boolean>;

export interface FrontDoorOptions {
  readonly routes: FunctionRoutes;
  readonly routePrefix: string;
  readonly keys: KeyPolicy;
  readonly cors: CorsPolicy;
  readonly invoker: Invoker;
  readonly bindings: BindingIo;
  /** Host-level routes (the admin API, extension webhooks), tried before function routes. */
  readonly hostRoutes: HostRouteHandler;
  readonly streamProxy: StreamProxy | undefined;
  readonly log: HostLogger;
  readonly logInvocations: boolean;
  /** The most of a request body the host reads (FUNCTIONS_REQUEST_BODY_SIZE_LIMIT; bodyLimit.ts). */
  readonly maxBodyBytes: number;
  /** The host's span for each request (requestSpans.ts). */
  readonly tracing: RequestTracing;
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.pause();
        reject(bodyTooLarge(limit));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function hasExpressions(route: HttpRoute): boolean {
  return Object.values(route.metadata.bindings).some(
    (b) => b.direction !== undefined && !/trigger$/i.test(b.type ?? '') && b.type !== 'http' && JSON.stringify(b).includes('{'),
  );
}

export class HttpFrontDoor {
  private stopping = false;
  /** Open server-sent-event responses: shutdown closes them rather than waiting (clients reconnect). */
  private readonly eventStreams = new Set<ServerResponse>();
  /** Responses not sent yet: at a stop each is told to close its connection after it, as Kestrel does. */
  private readonly inFlight = new Set<ServerResponse>();
  private readonly prefix: string;
  private readonly needsData = new Map<string, boolean>();
  /** Functions with bindings beyond the HTTP trigger and its response, which may be inputs to read. */
  private readonly mayHaveInputs = new Set<string>();

  constructor(private readonly options: FrontDoorOptions) {
    const p = options.routePrefix.replace(/^\/+|\/+$/g, '');
    this.prefix = p === '' ? '/' : `/${p.toLowerCase()}/`;
    for (const r of options.routes.routes) {
      this.needsData.set(r.functionName, hasExpressions(r));
      if (Object.keys(r.metadata.bindings).length > 2) this.mayHaveInputs.add(r.functionName);
    }
  }

  /**
   * Shutdown: open event streams are closed, in-flight requests finish with `Connection: close`, and a
   * request that still arrives on a connection gets a 503 problem with Retry-After (the listener
   * itself is closed by the provider, so new connections are refused, as on the real host:
   * devhost/docs/real-host.md#shutdown).
   */
  stop(): void {
    this.stopping = true;
    for (const res of this.eventStreams) res.destroy();
    this.eventStreams.clear();
    for (const res of this.inFlight) if (!res.headersSent) res.shouldKeepAlive = false;
  }

  handle = (req: IncomingMessage, res: ServerResponse): void => {
    this.inFlight.add(res);
    res.once('finish', () => this.inFlight.delete(res));
    res.once('close', () => this.inFlight.delete(res));
    this.route(req, res).catch((err: unknown) => this.fail(res, 'request', err));
  };

  /** The answer to a request that arrives while the host stops: retry in a moment, on another connection. */
  private static draining(res: ServerResponse): void {
    const body = JSON.stringify({
      type: 'about:blank',
      title: 'Service Unavailable',
      status: 503,
      detail: 'The host is shutting down; retry on a new connection.',
    });
    res.statusCode = 503;
    res.setHeader('Content-Type', 'application/problem+json');
    res.setHeader('Retry-After', '1');
    res.setHeader('Connection', 'close');
    res.setHeader('Content-Length', Buffer.byteLength(body));
    res.end(body);
  }

  private fail(res: ServerResponse, what: string, err: unknown): void {
    const detail = err instanceof Error || types.isNativeError(err) ? (err.stack ?? err.message) : String(err);
    this.options.log('error', `Unhandled error in ${what}: ${detail}`);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.statusCode = 500;
    res.setHeader('Content-Length', 0);
    res.end();
  }

  private static empty(res: ServerResponse, status: number, headers: Record<string, string> = {}): void {
    res.statusCode = status;
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    res.setHeader('Content-Length', 0);
    res.end();
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { cors } = this.options;
    if (cors.enabled && cors.preflight(req, res)) return;
    cors.apply(req, res);
    if (this.stopping) {
      HttpFrontDoor.draining(res);
      return;
    }
    // Kestrel reads `//evil.example/api/x` as a path whose first segment is empty, which no route
    // matches: the real host answers 404 and invokes nothing. A URL parser would take `evil.example`
    // for a host name and route the rest (devhost/docs/real-host.md#paths).
    if ((req.url ?? '/').startsWith('//')) {
      HttpFrontDoor.empty(res, 404);
      return;
    }
    // A backslash is a path character to Kestrel, while a WHATWG parser reads it as `/` (so that
    // `/\evil.example/api/x` would name a host): kept as the character it is, it matches no template
    // segment it is not in, as on the real host (devhost/docs/real-host.md#paths).
    const url = new URL((req.url ?? '/').replaceAll('\\', '%5C'), 'http://devhost');
    const span = this.options.tracing.start(req, res, url);
    const path = url.pathname;
    if (await this.options.hostRoutes(req, res, url)) return;
    if (path === '/' && req.method !== undefined && ['GET', 'HEAD'].includes(req.method) && this.prefix !== '/') {
      res.setHeader('Content-Type', 'text/plain; charset=utf-8');
      res.end('Your Functions app is up and running (devhost).\n');
      return;
    }
    const below = this.belowPrefix(path);
    const found = below === undefined ? { kind: 'none' as const } : this.options.routes.find(req.method ?? 'GET', below);
    // A route that exists for other methods only is not found either: the real host answers 404,
    // not 405 (devhost/docs/real-host.md#routing).
    if (found.kind === 'none') {
      HttpFrontDoor.empty(res, 404);
      return;
    }
    if (!this.options.keys.allows(found.route.authLevel, KeyPolicy.presented(req, url.searchParams))) {
      HttpFrontDoor.empty(res, 401);
      return;
    }
    span.reached(found.route.functionName);
    if (this.options.streamProxy !== undefined) await this.invokeStreamed(found.route, found.params, req, res, url, span);
    else await this.invokeBuffered(found.route, found.params, req, res, url, span);
  }

  /** The path below the route prefix; undefined outside it, or when an empty segment follows it (`/api//x`: no route matches on the real host, devhost/docs/real-host.md#paths). */
  private belowPrefix(path: string): string | undefined {
    if (this.prefix === '/') return path;
    const lower = path.toLowerCase();
    if (`${lower}/` === this.prefix) return '';
    if (!lower.startsWith(this.prefix) || lower.startsWith('/', this.prefix.length)) return undefined;
    return path.slice(this.prefix.length);
  }

  private parts(req: IncomingMessage, url: URL, params: Record<string, string>, body: Buffer | undefined): HttpRequestParts {
    const host = req.headers.host ?? 'localhost';
    return {
      method: req.method ?? 'GET',
      url: `http://${host}${req.url ?? '/'}`,
      headers: flatHeaders(req.headers),
      query: flatQuery(url.searchParams),
      params,
      body,
    };
  }

  private bindingData(route: HttpRoute, parts: HttpRequestParts): BindingData {
    if (this.needsData.get(route.functionName) !== true) return {};
    let json: unknown;
    if (parts.body !== undefined && parts.body.length > 0) {
      try {
        json = JSON.parse(parts.body.toString('utf8'));
      } catch {
        json = undefined;
      }
    }
    const data: Record<string, unknown> =
      typeof json === 'object' && json !== null && !Array.isArray(json) ? { ...(json as Record<string, unknown>) } : {};
    Object.assign(data, parts.params, { Query: parts.query, Headers: parts.headers });
    return data;
  }

  private logStart(route: HttpRoute, invocationId: string): void {
    if (this.options.logInvocations)
      this.options.log(
        'info',
        `Executing 'Functions.${route.functionName}' (Reason='This function was programmatically called via the host APIs.', Id=${invocationId})`,
      );
  }

  private logEnd(route: HttpRoute, invocationId: string, ok: boolean, ms: number): void {
    if (this.options.logInvocations || !ok) {
      this.options.log(
        ok ? 'info' : 'error',
        `Executed 'Functions.${route.functionName}' (${ok ? 'Succeeded' : 'Failed'}, Id=${invocationId}, Duration=${Math.round(ms)}ms)`,
      );
    }
  }

  /**
   * The trigger plus the function's other inputs. An input that cannot bind fails the request with
   * an empty 500 before the function runs, as on the real host (undefined: already answered).
   */
  private async inputs(
    route: HttpRoute,
    trigger: RpcParameterBinding,
    data: BindingData,
    res: ServerResponse,
    invocationId: string,
  ): Promise<RpcParameterBinding[] | undefined> {
    if (!this.mayHaveInputs.has(route.functionName)) return [trigger];
    try {
      const extra = await this.options.bindings.inputData(route.metadata, data);
      return [trigger, ...extra];
    } catch (err) {
      this.logEnd(route, invocationId, false, 0);
      this.fail(res, `function ${route.functionName} (Id=${invocationId})`, err);
      return undefined;
    }
  }

  /** The request body when `wanted` (else undefined); null once a body too large was answered with 413. */
  private async bodyOf(req: IncomingMessage, res: ServerResponse, wanted: boolean): Promise<Buffer | undefined | null> {
    if (!wanted) return undefined;
    const limit = this.options.maxBodyBytes;
    try {
      if (declaresTooMuch(req, limit)) throw bodyTooLarge(limit);
      return await readBody(req, limit);
    } catch (err) {
      if (!isDevhostError(err, 'BodyTooLarge')) throw err;
      HttpFrontDoor.empty(res, 413, { Connection: 'close' });
      return null;
    }
  }

  private async invokeBuffered(
    route: HttpRoute,
    params: Record<string, string>,
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    span: RequestSpan,
  ): Promise<void> {
    const method = (req.method ?? 'GET').toUpperCase();
    const body = await this.bodyOf(req, res, method !== 'GET' && method !== 'HEAD');
    if (body === null) return;
    const parts = this.parts(req, url, params, body);
    const data = this.bindingData(route, parts);
    const invocationId = randomUUID();
    this.logStart(route, invocationId);
    const inputData = await this.inputs(route, { name: route.triggerName, data: toRpcHttpRequest(parts) }, data, res, invocationId);
    if (inputData === undefined) return;
    const outcome = await this.options.invoker.invoke({
      functionName: route.functionName,
      invocationId,
      inputData,
      clientHeld: true,
      traceParent: span.traceParent,
    });
    if (!outcome.ok) {
      this.logEnd(route, invocationId, false, outcome.durationMs);
      this.fail(res, `function ${route.functionName} (Id=${invocationId})`, outcome.error);
      return;
    }
    try {
      await this.options.bindings.applyOutputs(route.metadata, outcome.response, data);
    } catch (err) {
      this.logEnd(route, invocationId, false, outcome.durationMs);
      this.fail(res, `output bindings of ${route.functionName} (Id=${invocationId})`, err);
      return;
    }
    this.logEnd(route, invocationId, true, outcome.durationMs);
    writeRpcHttpResponse(res, outcome.response.returnValue, method);
  }

  private async invokeStreamed(
    route: HttpRoute,
    params: Record<string, string>,
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    span: RequestSpan,
  ): Promise<void> {
    const proxy = this.options.streamProxy as StreamProxy;
    // The real host reads a body with a Content-Length for its binding data before it invokes
    // (bindingData.ts); the function then reads the same bytes through the proxy.
    const body = await this.bodyOf(req, res, Number(req.headers['content-length'] ?? '0') > 0);
    if (body === null) return;
    const parts = this.parts(req, url, params, body);
    const data = this.bindingData(route, parts);
    const invocationId = randomUUID();
    this.logStart(route, invocationId);
    const trigger: RpcParameterBinding = { name: route.triggerName, data: { http: { method: parts.method, url: parts.url } } };
    const inputData = await this.inputs(route, trigger, data, res, invocationId);
    if (inputData === undefined) return;
    const invocation = this.options.invoker.invoke({
      functionName: route.functionName,
      invocationId,
      inputData,
      triggerMetadata: streamTriggerMetadata({ ...parts, params: httpTriggerParams(params, parts.query, body) }),
      clientHeld: true,
      traceParent: span.traceParent,
    });
    const exchange = proxy.forward(
      invocationId,
      req,
      res,
      (r) => {
        if (String(r.getHeader('content-type') ?? '').startsWith('text/event-stream')) {
          this.options.invoker.release(invocation);
          this.eventStreams.add(r);
          r.on('close', () => this.eventStreams.delete(r));
        }
      },
      (err) => this.fail(res, `forwarding to the HTTP stream proxy (Id=${invocationId})`, err),
      body,
    );
    const outcome = await invocation;
    if (!outcome.ok) {
      this.logEnd(route, invocationId, false, outcome.durationMs);
      exchange.abort();
      this.fail(res, `function ${route.functionName} (Id=${invocationId})`, outcome.error);
      return;
    }
    try {
      await this.options.bindings.applyOutputs(route.metadata, outcome.response, data);
    } catch (err) {
      this.options.log(
        'error',
        `Output bindings of ${route.functionName} failed (Id=${invocationId}): ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
      );
    }
    this.logEnd(route, invocationId, true, outcome.durationMs);
    if (outcome.result === undefined || outcome.result === null) {
      // Nothing was returned, so the library sent nothing through its proxy: answer 204 ourselves.
      exchange.abort();
      if (!res.headersSent) HttpFrontDoor.empty(res, 204);
    }
  }
}
