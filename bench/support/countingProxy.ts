/**
 * A forwarding proxy in front of Azurite that records every storage request (service, method,
 * path) — what the storage account would bill as a transaction — for every client behind it,
 * other processes included (the devhost's own queue polling). Benchmarks classify the records.
 */
import { createServer, request as forward, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

import { connectionStringFor } from '../../devhost/azurite';

export type Service = 'blob' | 'queue' | 'table';

export interface StorageRequest {
  readonly service: Service;
  readonly method: string;
  /** Decoded path and query, e.g. `/devstoreaccount1/jobs-work-0/messages?numofmessages=16`. */
  readonly path: string;
}

export interface CountingProxy {
  readonly connectionString: string;
  /** Requests since the last `take()`. */
  take(): StorageRequest[];
  close(): Promise<void>;
}

export async function startCountingProxy(ports: Readonly<Record<Service, number>>): Promise<CountingProxy> {
  let seen: StorageRequest[] = [];
  const servers: Server[] = [];
  const sockets = new Set<Socket>();
  const listen = async (service: Service): Promise<number> => {
    const server = createServer((req, res) => {
      seen.push({ service, method: req.method ?? 'GET', path: decodeURIComponent(req.url ?? '/') });
      const upstream = forward(
        { host: '127.0.0.1', port: ports[service], method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => req.socket.destroy());
      req.pipe(upstream);
    });
    server.on('connection', (socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  };
  const proxied = { blob: await listen('blob'), queue: await listen('queue'), table: await listen('table') };
  return {
    connectionString: connectionStringFor('127.0.0.1', proxied),
    take() {
      const out = seen;
      seen = [];
      return out;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    },
  };
}
