/**
 * A fault-injecting HTTP proxy in front of Azurite, one listener per storage service. Tests point a
 * connection string at it (`connectionString`) and then decide, per request, what storage "does":
 * answer normally, answer with an error status without forwarding, hang (a timeout), refuse
 * (storage down), or forward and then lose the response after the write succeeded. Because it sits
 * on the network it works the same for every SDK client and for separate OS processes.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

import { connectionStringFor } from '../../devhost/azurite';

type StorageService = 'blob' | 'queue' | 'table';

export interface ProxiedRequest {
  readonly service: StorageService;
  readonly method: string;
  /** Path and query as Azurite sees them, e.g. `/devstoreaccount1/sequences(PartitionKey='a',RowKey='b')`. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

export type FaultAction =
  | { readonly kind: 'forward' }
  /** Answer with this status (and a storage-style error body) without touching Azurite. */
  | { readonly kind: 'status'; readonly status: number; readonly code?: string }
  /** Forward the request, let Azurite apply it, then destroy the client connection: the write happened, the caller never hears. */
  | { readonly kind: 'loseResponse' }
  /** Hold the request for `ms` then destroy the connection without forwarding (a timeout). */
  | { readonly kind: 'hang'; readonly ms: number }
  /** Destroy the connection at once without forwarding (storage unreachable). */
  | { readonly kind: 'refuse' }
  /** Forward the request once `until` resolves (a slow caller: its write lands late, but it lands). */
  | { readonly kind: 'hold'; readonly until: Promise<void> };

type FaultRule = (request: ProxiedRequest) => FaultAction | undefined;

export interface FaultProxy {
  readonly connectionString: string;
  /** Requests seen, per service and outcome. */
  readonly counts: Record<StorageService, { forwarded: number; faulted: number }>;
  /** Replaces the rules; the first rule that returns an action decides. No rule: forward. */
  setRules(...rules: FaultRule[]): void;
  /**
   * Resolves once every request forwarded so far has been answered upstream (a hung or refused one
   * never reaches storage). After it, no write a client gave up on can still land.
   */
  forwardedSettled(): Promise<void>;
  close(): Promise<void>;
}

function parseEndpoints(connectionString: string): Record<StorageService, URL> {
  const parts = new Map(
    connectionString.split(';').flatMap((segment) => {
      const at = segment.indexOf('=');
      return at > 0 ? [[segment.slice(0, at).toLowerCase(), segment.slice(at + 1)] as const] : [];
    }),
  );
  const get = (key: string): URL => {
    const value = parts.get(key);
    if (value === undefined) throw new Error(`connection string has no ${key}`);
    return new URL(value);
  };
  return { blob: get('blobendpoint'), queue: get('queueendpoint'), table: get('tableendpoint') };
}

function errorBody(service: StorageService, status: number, code: string): { type: string; body: string } {
  if (service === 'table') {
    return {
      type: 'application/json;odata=minimalmetadata',
      body: JSON.stringify({ 'odata.error': { code, message: { lang: 'en-US', value: `Injected fault ${status}` } } }),
    };
  }
  return {
    type: 'application/xml',
    body: `<?xml version="1.0" encoding="utf-8"?><Error><Code>${code}</Code><Message>Injected fault ${status}</Message></Error>`,
  };
}

function defaultCode(status: number): string {
  if (status === 412) return 'UpdateConditionNotSatisfied';
  if (status === 503) return 'ServerBusy';
  if (status === 500) return 'InternalError';
  if (status === 409) return 'EntityAlreadyExists';
  return 'InjectedFault';
}

export async function startFaultProxy(targetConnectionString: string): Promise<FaultProxy> {
  const targets = parseEndpoints(targetConnectionString);
  let rules: FaultRule[] = [];
  const counts: FaultProxy['counts'] = {
    blob: { forwarded: 0, faulted: 0 },
    queue: { forwarded: 0, faulted: 0 },
    table: { forwarded: 0, faulted: 0 },
  };
  const servers: Server[] = [];
  const sockets = new Set<Socket>();
  const inFlight = new Set<Promise<void>>();

  const handler = (service: StorageService) => (req: IncomingMessage, res: ServerResponse) => {
    const proxied: ProxiedRequest = { service, method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers };
    let action: FaultAction = { kind: 'forward' };
    for (const rule of rules) {
      const decided = rule(proxied);
      if (decided !== undefined) {
        action = decided;
        break;
      }
    }
    if (action.kind === 'refuse') {
      counts[service].faulted++;
      req.socket.destroy();
      return;
    }
    if (action.kind === 'hang') {
      counts[service].faulted++;
      setTimeout(() => req.socket.destroy(), action.ms).unref();
      return;
    }
    if (action.kind === 'status') {
      counts[service].faulted++;
      const { type, body } = errorBody(service, action.status, action.code ?? defaultCode(action.status));
      req.resume();
      res.writeHead(action.status, { 'content-type': type, 'x-ms-error-code': action.code ?? defaultCode(action.status) });
      res.end(body);
      return;
    }
    if (action.kind === 'hold') {
      req.pause();
      void action.until.then(() => forward(req, res, service, false));
      return;
    }
    forward(req, res, service, action.kind === 'loseResponse');
  };

  const forward = (req: IncomingMessage, res: ServerResponse, service: StorageService, lose: boolean): void => {
    const target = targets[service];
    counts[service].forwarded++;
    let settled = (): void => undefined;
    const forwarded = new Promise<void>((resolve) => (settled = resolve));
    inFlight.add(forwarded);
    void forwarded.then(() => inFlight.delete(forwarded));
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } },
      (upstreamRes) => {
        if (lose) {
          upstreamRes.resume();
          upstreamRes.on('end', () => req.socket.destroy());
          return;
        }
        res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
        upstreamRes.pipe(res);
      },
    );
    upstream.on('error', () => req.socket.destroy());
    upstream.on('close', settled);
    req.pipe(upstream);
  };

  const listen = async (service: StorageService): Promise<number> => {
    const server = createServer(handler(service));
    server.keepAliveTimeout = 1000;
    server.on('connection', (socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  };

  const ports = { blob: await listen('blob'), queue: await listen('queue'), table: await listen('table') };
  return {
    connectionString: connectionStringFor('127.0.0.1', ports),
    counts,
    setRules(...next) {
      rules = next;
    },
    async forwardedSettled() {
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    },
  };
}
