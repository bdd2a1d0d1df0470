/**
 * The extension's worker-facing listener: the Durable HTTP API at `http://127.0.0.1:<port>/durabletask/`,
 * apart from the host's public port, as the real extension serves it (it tries 127.0.0.1:17071, then
 * random ports in 30000–31000: devhost/docs/real-host.md#durable-rpc). Only this machine can reach it,
 * and only the worker is told where it is (the durableClient binding's `rpcBaseUrl`); the public port
 * has no `/durabletask/` route. The devhost takes any free port the system hands out, so that several
 * devhosts can run at once (tests do).
 *
 * It answers only requests addressed to it by that address (`Host: 127.0.0.1:<port>`, or
 * `localhost:<port>`): a web page the developer opens could otherwise point a name of its own at
 * 127.0.0.1 (DNS rebinding) and drive the Durable API from the browser. Anything else is 400, as
 * Kestrel's host filtering answers.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

import { rpcPath } from './clientData';

export interface RpcListener {
  /** e.g. `http://127.0.0.1:38211/durabletask/` */
  readonly baseUrl: string;
  close(): Promise<void>;
}

export function openRpcListener(
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  onError: (err: unknown) => void,
): Promise<RpcListener> {
  let hosts: ReadonlySet<string> = new Set();
  const server = createServer({ keepAliveTimeout: 5000 }, (req, res) => {
    if (!hosts.has((req.headers.host ?? '').toLowerCase())) {
      res.writeHead(400, { 'Content-Length': 0, Connection: 'close' });
      res.end();
      return;
    }
    handle(req, res).catch((err: unknown) => {
      onError(err);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      hosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
      resolve({
        baseUrl: `http://127.0.0.1:${port}${rpcPath}/`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
