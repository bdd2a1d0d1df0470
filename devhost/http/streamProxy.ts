/**
 * Stream mode (`app.setup({ enableHttpStream: true })`): the library runs its own HTTP server (the
 * `HttpUri` capability) and waits, inside the invocation, for the host to forward the raw request
 * with `x-ms-invocation-id`, `x-forwarded-host` and `x-forwarded-proto`; it then writes the
 * response to that connection, body streamed. This forwards one request and relays the response,
 * chunk by chunk, so server-sent events reach the client as they are written. A client that goes
 * away tears the forwarded connection down.
 */
import { Agent, type IncomingMessage, request as httpRequest, Server, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';

const hopByHop = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'trailers',
  'transfer-encoding',
  'upgrade',
  'host',
]);

export interface ForwardedExchange {
  /** Tears the forwarded connection down (the invocation produced no streamed response). */
  abort(): void;
}

/** The library's proxy server object, found by its port (the library keeps it to itself). */
function findLibraryServer(port: number): Server | undefined {
  const handles = (process as unknown as { _getActiveHandles?: () => unknown[] })._getActiveHandles?.() ?? [];
  for (const handle of handles) {
    if (!(handle instanceof Server)) continue;
    const address = handle.address();
    if (typeof address === 'object' && address !== null && address.port === port) return handle;
  }
  return undefined;
}

/** A request whose body was read already, offered again: same head, the bytes as a fresh stream. */
function replayed(req: IncomingMessage, body: Buffer): IncomingMessage {
  const copy = Readable.from([body]) as unknown as IncomingMessage;
  return Object.assign(copy, { headers: req.headers, method: req.method, url: req.url, httpVersion: req.httpVersion, socket: req.socket });
}

export class StreamProxy {
  private readonly target: URL;
  private readonly agent = new Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 256, scheduling: 'lifo' });
  /**
   * When the library's proxy server lives in this process (it always does here), requests are
   * handed to it directly: the library gets the client's own request and response objects, exactly
   * what it would get from a forwarded connection, without a second HTTP hop. Otherwise they are
   * forwarded over TCP, as the real host does.
   */
  private readonly direct: Server | undefined;

  constructor(httpUri: string, options: { direct?: boolean } = {}) {
    this.target = new URL(httpUri);
    this.direct = options.direct === false ? undefined : findLibraryServer(Number(this.target.port));
  }

  forward(
    invocationId: string,
    req: IncomingMessage,
    res: ServerResponse,
    onResponseHead: (res: ServerResponse) => void,
    onError: (err: Error) => void,
    /** The body, when the host has read it already (for its binding data); else it is streamed from `req`. */
    body?: Buffer,
  ): ForwardedExchange {
    if (this.direct !== undefined) return this.handOver(this.direct, invocationId, req, res, onResponseHead, body);
    return this.forwardTcp(invocationId, req, res, onResponseHead, onError, body);
  }

  private handOver(
    server: Server,
    invocationId: string,
    req: IncomingMessage,
    res: ServerResponse,
    onResponseHead: (res: ServerResponse) => void,
    body: Buffer | undefined,
  ): ForwardedExchange {
    req.headers['x-ms-invocation-id'] = invocationId;
    req.headers['x-forwarded-host'] = req.headers.host ?? 'localhost';
    req.headers['x-forwarded-proto'] = 'http';
    const source = body === undefined ? req : replayed(req, body);
    // The library sets status and headers, then writes: catch the moment the head goes out.
    const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
    res.writeHead = (...args: unknown[]): ServerResponse => {
      res.writeHead = writeHead;
      onResponseHead(res);
      return writeHead(...args);
    };
    // Cork from the first write to the next tick: a short response (write, then end) leaves in one
    // system call; a stream's later chunks go out as written.
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    res.write = ((...args: unknown[]): boolean => {
      res.write = write as ServerResponse['write'];
      res.cork();
      process.nextTick(() => res.uncork());
      return write(...args);
    }) as ServerResponse['write'];
    server.emit('request', source, res);
    // The library owns the client's own response here: there is no separate connection to tear down.
    return { abort: () => undefined };
  }

  private forwardTcp(
    invocationId: string,
    req: IncomingMessage,
    res: ServerResponse,
    onResponseHead: (res: ServerResponse) => void,
    onError: (err: Error) => void,
    body: Buffer | undefined,
  ): ForwardedExchange {
    const headers: Record<string, string | string[]> = {};
    for (const [key, value] of Object.entries(req.headers)) if (value !== undefined && !hopByHop.has(key)) headers[key] = value;
    if (req.headers['transfer-encoding'] !== undefined) headers['transfer-encoding'] = req.headers['transfer-encoding'];
    headers['x-ms-invocation-id'] = invocationId;
    headers['x-forwarded-host'] = req.headers.host ?? 'localhost';
    headers['x-forwarded-proto'] = 'http';
    let aborted = false;
    const upstream = httpRequest({
      host: this.target.hostname,
      port: this.target.port,
      method: req.method,
      path: req.url,
      headers,
      agent: this.agent,
    });
    upstream.on('response', (proxied) => {
      res.statusCode = proxied.statusCode ?? 200;
      for (const [key, value] of Object.entries(proxied.headers)) {
        if (value === undefined || hopByHop.has(key) || key === 'x-ms-invocation-id') continue;
        res.setHeader(key, value);
      }
      onResponseHead(res);
      // Server-sent events: the client should see the head now, not with the first event.
      if (String(proxied.headers['content-type'] ?? '').startsWith('text/event-stream')) res.flushHeaders();
      proxied.pipe(res);
      proxied.on('error', () => res.destroy());
      proxied.on('aborted', () => res.destroy());
    });
    upstream.on('error', (err) => {
      if (aborted) return;
      if (!res.headersSent && !res.writableEnded) onError(err);
      else res.destroy();
    });
    // The client went away (or the response is complete): drop the forwarded exchange if still open.
    res.on('close', () => {
      if (!res.writableFinished) {
        aborted = true;
        upstream.destroy();
      }
    });
    if (body === undefined) req.pipe(upstream);
    else upstream.end(body);
    return {
      abort: () => {
        aborted = true;
        upstream.destroy();
      },
    };
  }

  /**
   * Drops our connections and closes the library's proxy server too: the library offers no way to
   * stop it, and a process running several hosts in turn (tests) would otherwise keep it listening.
   */
  close(): void {
    this.agent.destroy();
    const server = this.direct ?? findLibraryServer(Number(this.target.port));
    server?.close();
    server?.closeAllConnections();
  }
}
