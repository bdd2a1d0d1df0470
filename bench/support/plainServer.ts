/**
 * Baselines for bench/devhost.ts: a plain `node:http` server (its own process, like the devhost)
 * running the same handler logic without any Functions host — the trivial fixture's handler, or
 * the sequences routes' own `RouteDefinition.run`. Prints `listening on <url>` once ready.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import type { HttpResult } from '../../shared/http/responses';
import type { RequestLike } from '../../shared/http/route';
import { productionApp } from '../../shared/app/production';
import { sequencesRoutes } from '../../shared/sequences/routes';

function requestLike(req: IncomingMessage, body: string, params: Record<string, string>): RequestLike {
  const url = `http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`;
  return {
    method: req.method ?? 'GET',
    url,
    headers: { get: (name) => (req.headers[name.toLowerCase()] as string | undefined) ?? null },
    params,
    query: new URL(url).searchParams,
    text: () => Promise.resolve(body),
  };
}

function send(res: ServerResponse, result: HttpResult): void {
  res.statusCode = result.status;
  for (const [k, v] of Object.entries(result.headers ?? {})) res.setHeader(k, v);
  if (result.jsonBody !== undefined) {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(result.jsonBody));
  } else {
    res.end(typeof result.body === 'string' ? result.body : undefined);
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function main(): void {
  const mode = process.argv[2];
  let handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  if (mode === 'trivial') {
    const { pong } = createRequire(__filename)(join(__dirname, '..', '..', '..', 'bench', 'fixtures', 'trivial', 'handler.js')) as {
      pong: () => string;
    };
    handle = (_req, res) => {
      res.end(pong());
      return Promise.resolve();
    };
  } else if (mode === 'trivial-web') {
    // The same, plus the web Request/Response round trip @azure/functions makes for every invocation.
    const { pong } = createRequire(__filename)(join(__dirname, '..', '..', '..', 'bench', 'fixtures', 'trivial', 'handler.js')) as {
      pong: () => string;
    };
    handle = async (req, res) => {
      const request = new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, { method: req.method ?? 'GET' });
      const response = new Response(pong(), { headers: { 'content-type': 'text/plain' } });
      const body = Buffer.from(await response.arrayBuffer());
      res.setHeader('content-type', response.headers.get('content-type') ?? 'text/plain');
      res.end(request.method === 'HEAD' ? undefined : body);
    };
  } else if (mode === 'sequences') {
    // The app as the host builds it, from this process's environment (the same settings as the devhost's).
    const app = productionApp();
    const routes = sequencesRoutes({ service: () => app.sequences });
    const next = routes.find((r) => r.name === 'sequencesNext');
    const configure = routes.find((r) => r.name === 'sequencesConfigure');
    if (next === undefined || configure === undefined) throw new Error('sequences routes not found');
    handle = async (req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const m = /^\/api\/sequences\/([^/]+)(\/next)?$/.exec(path);
      if (m === null) {
        res.statusCode = 404;
        res.end();
        return;
      }
      const route = m[2] === undefined ? configure : next;
      send(res, await route.run(requestLike(req, await readBody(req), { name: decodeURIComponent(m[1] as string) })));
    };
  } else {
    throw new Error(`usage: plainServer.js trivial|trivial-web|sequences (got ${mode})`);
  }
  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      res.statusCode = 500;
      res.end();
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    console.log(`listening on http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`);
  });
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}

main();
