/**
 * The front door: one address for every instance, round-robin over the instances that are up, as
 * Azure's front end spreads an app's requests. A request is sent to the next instance; when that
 * instance refuses the connection (it is down and the front door did not know yet) the request goes
 * to the next one, as it has reached no instance. A request an instance accepted and then lost (it
 * was killed mid-request) is answered 502, as Azure's front end answers then: the caller cannot
 * know whether it took effect. Responses stream through (server-sent events, long polls), and carry
 * `x-scaleout-instance`: the instance that answered, for the history.
 */
import { createServer, request as forward, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export const instanceHeader = 'x-scaleout-instance';

export interface Backend {
  readonly index: number;
  readonly baseUrl: string;
}

export interface FrontDoor {
  readonly url: string;
  /** Requests that reached an instance, by instance. */
  readonly served: Map<number, number>;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

export async function startFrontDoor(backends: () => readonly Backend[]): Promise<FrontDoor> {
  let next = 0;
  const served = new Map<number, number>();
  const sockets = new Set<Socket>();

  /** Sends to one instance; resolves false when the connection was refused before any answer. */
  const attempt = (backend: Backend, req: IncomingMessage, body: Buffer, res: ServerResponse): Promise<boolean> =>
    new Promise((resolve) => {
      const target = new URL(req.url ?? '/', backend.baseUrl);
      let answered = false;
      const upstream = forward(
        {
          // A connection per request: a refusal then always means the request reached no instance.
          agent: false,
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: `${target.pathname}${target.search}`,
          headers: { ...req.headers, host: target.host, 'content-length': String(body.length) },
        },
        (answer) => {
          answered = true;
          served.set(backend.index, (served.get(backend.index) ?? 0) + 1);
          res.writeHead(answer.statusCode ?? 502, { ...answer.headers, [instanceHeader]: String(backend.index) });
          res.flushHeaders();
          answer.pipe(res);
          answer.once('error', () => res.destroy());
          answer.once('aborted', () => res.destroy());
          // The instance died mid-response: the caller's connection ends too, as it would in Azure.
          answer.socket.once('close', () => {
            if (!answer.complete) res.destroy();
          });
          answer.once('end', () => resolve(true));
          res.once('close', () => resolve(true));
        },
      );
      upstream.once('error', (err) => {
        if (answered) return;
        // A fresh connection (no keep-alive) that was refused reached no instance: try the next one.
        if ((err as NodeJS.ErrnoException).code === 'ECONNREFUSED') return resolve(false);
        if (!res.headersSent) {
          res.writeHead(502, { 'content-type': 'text/plain', [instanceHeader]: String(backend.index) });
          res.end(`The instance was lost mid-request: ${err.message}`);
        } else res.destroy();
        resolve(true);
      });
      // The caller hung up: so does the front door (a long poll or an event stream let go).
      res.once('close', () => upstream.destroy());
      upstream.end(body);
    });

  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      for (let tried = 0; ; tried++) {
        const live = backends();
        if (live.length === 0 || tried >= live.length + 2) {
          res.writeHead(503, { 'content-type': 'text/plain', 'retry-after': '1' });
          res.end('No instance is up');
          return;
        }
        const backend = live[next++ % live.length] as Backend;
        if (await attempt(backend, req, body, res)) return;
      }
    })().catch(() => res.destroy());
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    served,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
