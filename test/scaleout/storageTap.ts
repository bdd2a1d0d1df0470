/**
 * The instances' way to storage: one forwarding proxy per instance in front of Azurite, so every
 * storage request is counted (what Azure bills as a transaction) and known by the instance that sent
 * it. For sequences it keeps more: each successful write of a sequence's row, with the high-water
 * mark it set. Conditional writes of one row commit one after another (each needs the ETag the
 * previous one returned), so in the order their answers arrive they are the row's history: a write
 * that raised the mark from lo to hi reserved the block [lo, hi) for its instance, one that lowered
 * it gave [hi, lo) back. That tells which instance held which numbers without its logs — which a
 * killed host loses the last of (the worker's output still in flight when SIGKILL lands).
 */
import { createServer, request as forward, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

import { type AzuritePorts, connectionStringFor } from '../../devhost/azurite';

type Service = 'blob' | 'queue' | 'table';

export interface StorageRequest {
  readonly instance: number;
  readonly service: Service;
  readonly method: string;
  /** Decoded path and query, e.g. `/devstoreaccount1/jobs-work-0/messages?numofmessages=16`. */
  readonly path: string;
}

export interface RowWrite {
  readonly instance: number;
  /** When its answer passed the tap. */
  readonly at: number;
  readonly sequence: string;
  readonly next: number;
}

export interface StorageTap {
  /** The connection string instance `i` uses. */
  connectionString(instance: number): string;
  /** Requests since the last `take()`. */
  take(): StorageRequest[];
  /** Every successful write of a sequence row's high-water mark, in commit order. */
  readonly sequenceWrites: readonly RowWrite[];
  close(): Promise<void>;
}

/** `{"next":"123","next@odata.type":"Edm.Int64",…}` → 123 (a merge that does not set `next` → undefined). */
function nextOf(body: string): number | undefined {
  try {
    const value = (JSON.parse(body) as Record<string, unknown>).next;
    return typeof value === 'string' || typeof value === 'number' ? Number(value) : undefined;
  } catch {
    return undefined;
  }
}

/** `/account/sequences(PartitionKey='name',RowKey='sequence')` → name. */
function sequenceRow(path: string): string | undefined {
  const m = /^\/[^/]+\/sequences\(PartitionKey='((?:[^']|'')*)',RowKey='sequence'\)/.exec(path);
  return m?.[1]?.replace(/''/g, "'");
}

export async function startStorageTap(ports: AzuritePorts, instances: number): Promise<StorageTap> {
  let seen: StorageRequest[] = [];
  const sequenceWrites: RowWrite[] = [];
  const servers: Server[] = [];
  const sockets = new Set<Socket>();
  const listen = async (instance: number, service: Service): Promise<number> => {
    const server = createServer((req, res) => {
      const path = decodeURIComponent(req.url ?? '/');
      seen.push({ instance, service, method: req.method ?? 'GET', path });
      const row =
        service === 'table' && (req.method === 'PATCH' || req.method === 'MERGE' || req.method === 'PUT') ? sequenceRow(path) : undefined;
      const chunks: Buffer[] = [];
      const upstream = forward(
        { host: '127.0.0.1', port: ports[service], method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          const status = answer.statusCode ?? 502;
          if (row !== undefined && status >= 200 && status < 300) {
            const next = nextOf(Buffer.concat(chunks).toString('utf8'));
            if (next !== undefined) sequenceWrites.push({ instance, at: Date.now(), sequence: row, next });
          }
          res.writeHead(status, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => req.socket.destroy());
      if (row !== undefined) req.on('data', (c: Buffer) => chunks.push(c));
      req.pipe(upstream);
    });
    server.on('connection', (socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  };
  const strings: string[] = [];
  for (let i = 0; i < instances; i++)
    strings.push(
      connectionStringFor('127.0.0.1', { blob: await listen(i, 'blob'), queue: await listen(i, 'queue'), table: await listen(i, 'table') }),
    );
  return {
    connectionString: (i) => strings[i] ?? (strings[0] as string),
    take() {
      const out = seen;
      seen = [];
      return out;
    },
    sequenceWrites,
    async close() {
      for (const socket of sockets) socket.destroy();
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    },
  };
}

/** The blocks each write reserved (the mark raised) and the ranges given back (lowered), by instance. */
export function sequenceHistory(
  writes: readonly RowWrite[],
  sequence: string,
  start: number,
): { reserved: (RowWrite & { lo: number })[]; returned: (RowWrite & { hi: number })[] } {
  const reserved: (RowWrite & { lo: number })[] = [];
  const returned: (RowWrite & { hi: number })[] = [];
  let mark = start;
  for (const w of writes.filter((x) => x.sequence === sequence)) {
    if (w.next > mark) reserved.push({ ...w, lo: mark });
    else if (w.next < mark) returned.push({ ...w, hi: mark });
    mark = w.next;
  }
  return { reserved, returned };
}
