/**
 * HTTP triggers as a provider. The port opens first (`listen`), before the app's hooks and the other
 * providers start, and holds requests (StartupGate); `start` builds the routing table and hands the
 * port to the front door. Host-level routes come first: the admin API, then whatever other providers
 * serve (the Durable webhooks).
 */
import { createServer } from 'node:http';

import { getSetting } from '../app/settings';
import type { FunctionMetadata } from '../core/types';
import { text } from '../core/values';
import type { HostProvider, HostServices } from '../provider';
import { requestBodyLimit } from './bodyLimit';
import type { CorsPolicy } from './cors';
import { HttpFrontDoor, type HostRouteHandler } from './frontDoor';
import { FunctionRoutes, httpTrigger } from './functionRoutes';
import { StartupGate } from './startupGate';
import { StreamProxy } from './streamProxy';
import type { RequestTracing } from '../telemetry/requestSpans';

export interface HttpProviderOptions {
  readonly cors: CorsPolicy;
  /** The host's admin API (`/admin/*`). */
  readonly admin: HostRouteHandler;
  /** The host's providers, whose `handleHttp` serve host-level routes. */
  readonly providers: () => readonly HostProvider[];
  /** Where the library's HTTP stream proxy listens (the app turned streaming on), if it does. */
  readonly streamUri: string | undefined;
  readonly logInvocations: boolean;
  /** The host's span for each request. */
  readonly tracing: RequestTracing;
}

export interface HttpAddress {
  readonly port: number;
  /** The origin to reach this host on, e.g. http://127.0.0.1:7071. */
  readonly baseUrl: string;
  /** The same, as the function table and invoke URLs show it (`localhost` for 127.0.0.1). */
  readonly displayBase: string;
}

export class HttpProvider implements HostProvider {
  readonly name = 'http';
  readonly bindingTypes = ['httpTrigger'];
  // A kept-alive connection stays open as long as on the real host, whose Kestrel closes one after 130 s
  // idle (KestrelServerLimits.KeepAliveTimeout's default; test/parity/hosts.test.ts pins it). Node's own
  // 5 s closed sockets a busy client had already written its next request to (ECONNRESET on a POST).
  private readonly server = createServer({ keepAliveTimeout: 130_000 });
  // Requests that come before the host is ready are held, not left without a listener (they hung).
  private readonly gate = new StartupGate();
  private frontDoor: HttpFrontDoor | undefined;
  private routes: FunctionRoutes | undefined;
  private streamProxy: StreamProxy | undefined;
  private routePrefix = '';
  private address: HttpAddress | undefined;
  private stopped: Promise<void> | undefined;

  constructor(private readonly options: HttpProviderOptions) {
    this.server.on('request', this.gate.handle);
  }

  /** Opens the port (0 picks a free one); requests wait until `start`. */
  listen(port: number, bindHost: string): Promise<HttpAddress> {
    return new Promise((resolve, reject) => {
      this.server.once('error', (err: NodeJS.ErrnoException) => {
        reject(err.code === 'EADDRINUSE' ? new Error(`Port ${port} is already in use; set PORT (or --port) to another port`) : err);
      });
      this.server.listen(port, bindHost, () => {
        const bound = this.server.address();
        const actual = typeof bound === 'object' && bound !== null ? bound.port : port;
        const host = bindHost === '0.0.0.0' || bindHost === '::' ? 'localhost' : bindHost.includes(':') ? `[${bindHost}]` : bindHost;
        const baseUrl = `http://${host}:${actual}`;
        this.address = { port: actual, baseUrl, displayBase: bindHost === '127.0.0.1' ? `http://localhost:${actual}` : baseUrl };
        resolve(this.address);
      });
    });
  }

  start(host: HostServices): Promise<void> {
    this.routePrefix = host.config.routePrefix.replace(/^\/+|\/+$/g, '');
    this.routes = new FunctionRoutes(host.functions.filter((fn) => httpTrigger(fn) !== undefined));
    // DEVHOST_STREAM_FORWARDING=tcp forwards streamed requests over TCP like the real host (default: handed over in-process).
    const forwarding = (getSetting(host.settings, 'DEVHOST_STREAM_FORWARDING') ?? 'direct').toLowerCase();
    const uri = this.options.streamUri;
    this.streamProxy = uri === undefined ? undefined : new StreamProxy(uri, { direct: forwarding !== 'tcp' });
    const { admin, providers } = this.options;
    const hostRoutes: HostRouteHandler = async (req, res, url) => {
      const path = url.pathname.toLowerCase();
      if ((path === '/admin' || path.startsWith('/admin/')) && (await admin(req, res, url))) return true;
      for (const provider of providers()) if (provider.handleHttp !== undefined && (await provider.handleHttp(req, res, url))) return true;
      return false;
    };
    this.frontDoor = new HttpFrontDoor({
      routes: this.routes,
      routePrefix: host.config.routePrefix,
      keys: host.keys,
      cors: this.options.cors,
      invoker: host.invoker,
      bindings: host.bindings,
      hostRoutes,
      streamProxy: this.streamProxy,
      log: host.log,
      logInvocations: this.options.logInvocations,
      maxBodyBytes: requestBodyLimit(getSetting(host.settings, 'FUNCTIONS_REQUEST_BODY_SIZE_LIMIT')),
      tracing: this.options.tracing,
    });
    this.gate.open(this.frontDoor.handle);
    return Promise.resolve();
  }

  /**
   * The drain, as the real host's (devhost/docs/real-host.md#shutdown): the port stops listening (a
   * new connection is refused), idle kept-alive connections close, in-flight requests finish with
   * `Connection: close`, and a request that still arrives on an open connection gets a 503 problem
   * with Retry-After. Open event streams are closed.
   */
  pause(): Promise<void> {
    this.frontDoor?.stop();
    if (this.server.listening) this.server.close();
    this.server.closeIdleConnections();
    return Promise.resolve();
  }

  /** Held requests get their 503 (a start that failed), then the port and the stream proxy close. */
  stop(): Promise<void> {
    return (this.stopped ??= (async () => {
      this.gate.refuse();
      await new Promise<void>((done) => {
        this.server.close(() => done());
        this.server.closeAllConnections();
      });
      this.streamProxy?.close();
    })());
  }

  /** The URL template an HTTP function is invoked at (its declared `route` when it is not served). */
  invokeUrl(functionName: string, route: string): string {
    const template = this.routes?.routes.find((r) => r.functionName === functionName)?.template.template ?? route;
    return `${this.address?.displayBase ?? ''}/${this.routePrefix === '' ? '' : `${this.routePrefix}/`}${template}`;
  }

  describe(fn: FunctionMetadata): string | undefined {
    const trigger = httpTrigger(fn)?.[1];
    if (trigger === undefined) return undefined;
    const methods = Array.isArray(trigger.methods) ? (trigger.methods as unknown[]).map((m) => String(m).toUpperCase()) : [];
    const declared = typeof trigger.route === 'string' && trigger.route !== '' ? trigger.route : fn.name;
    const level = text(trigger.authLevel, 'anonymous');
    return `[${methods.length === 0 ? 'ALL' : methods.join(',')}] ${this.invokeUrl(fn.name, declared)}${level === 'anonymous' ? '' : ` (${level})`}`;
  }
}
