/**
 * An HTTP proxy in front of a host that can break connections the way networks do: cut a response
 * mid-stream (after its first bytes reach the client), or forward a request and then lose the whole
 * answer (the server did the work, the client never hears). The storage fault proxy in
 * test/support/faultProxy.ts speaks Azurite's protocol; this one sits between a client and the app.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

type CutAction = 'forward' | 'cutMidStream' | 'loseResponse';
type CutRule = (method: string, path: string) => CutAction;

export interface CutProxy {
  /** The proxy's base URL with the host's path prefix, e.g. `http://127.0.0.1:1234/api`. */
  readonly baseUrl: string;
  readonly seen: { method: string; path: string; action: CutAction }[];
  setRule(rule: CutRule): void;
  close(): Promise<void>;
}

export async function startCutProxy(target: string): Promise<CutProxy> {
  const upstream = new URL(target);
  let rule: CutRule = () => 'forward';
  const seen: CutProxy['seen'] = [];
  const sockets = new Set<Socket>();

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const path = req.url ?? '/';
    const action = rule(req.method ?? 'GET', path);
    seen.push({ method: req.method ?? 'GET', path, action });
    const out = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: req.method, path, headers: { ...req.headers, host: upstream.host } },
      (answer) => {
        if (action === 'loseResponse') {
          // Let the server finish, then drop the client's connection without a byte of the answer.
          answer.resume();
          answer.on('end', () => req.socket.destroy());
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        res.flushHeaders();
        if (action === 'cutMidStream') {
          answer.once('data', (chunk: Buffer) => {
            res.write(chunk);
            setTimeout(() => {
              answer.destroy();
              req.socket.destroy();
            }, 50);
          });
          return;
        }
        answer.pipe(res);
      },
    );
    out.on('error', () => req.socket.destroy());
    req.pipe(out);
  };

  const server: Server = createServer(handle);
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}${upstream.pathname.replace(/\/+$/, '')}`,
    seen,
    setRule: (r) => (rule = r),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
