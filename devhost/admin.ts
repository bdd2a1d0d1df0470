/**
 * Host-level admin endpoints (not under the route prefix), guarded by the master key (always):
 * - `GET /admin/host/status` — state, version, uptime (the real host's shape, trimmed).
 * - `GET /admin/functions`, `GET /admin/functions/{name}` — registrations with their bindings
 *   (`%Setting%` resolved), trigger summary and invoke URL.
 * - `POST /admin/functions/{name}` `{"input": "..."}` — run a non-HTTP function now (as the real
 *   host's admin API does): a timer ignores the input, a queue function gets it as its message.
 * - `GET /admin/devhost/clock` → `{now, virtual}`; `POST /admin/devhost/clock` `{"advanceMs": n}` or
 *   `{"to": iso}` moves a virtual clock in steps (see clockControl.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import type { HostClock } from './clock';
import { type ClockControl } from './clockControl';
import type { FunctionSummary } from './functionTable';
import type { HostRouteHandler } from './http/frontDoor';
import { KeyPolicy } from './keys';
import { isDevhostError } from './errors';

export interface AdminOptions {
  readonly keys: KeyPolicy;
  readonly clock: HostClock;
  readonly clockControl: ClockControl;
  readonly functions: () => readonly FunctionSummary[];
  /** Starts the function now; false when no provider triggers a function of that name. */
  readonly runNow: (name: string, input: string | undefined) => boolean;
  readonly startedAt: number;
  readonly hostId: string;
}

function json(res: ServerResponse, status: number, body: unknown, contentType = 'application/json; charset=utf-8'): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

function problem(res: ServerResponse, status: number, title: string, detail: string): void {
  json(res, status, { type: 'about:blank', title, status, detail }, 'application/problem+json; charset=utf-8');
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8').trim();
  return text === '' ? {} : (JSON.parse(text) as unknown);
}

function clockTarget(body: unknown, now: number): number | string {
  if (typeof body !== 'object' || body === null) return 'The body must be a JSON object: {"advanceMs": n} or {"to": "<ISO time>"}';
  const { advanceMs, to } = body as { advanceMs?: unknown; to?: unknown };
  if (advanceMs !== undefined && to !== undefined) return 'Give either advanceMs or to, not both';
  if (advanceMs !== undefined) {
    if (typeof advanceMs !== 'number' || !Number.isFinite(advanceMs) || advanceMs < 0)
      return 'advanceMs must be a non-negative number of milliseconds';
    return now + advanceMs;
  }
  if (typeof to === 'string') {
    const at = Date.parse(to);
    if (Number.isNaN(at)) return 'to must be an ISO 8601 time';
    if (at < now) return `to (${to}) is before the clock's current time ${new Date(now).toISOString()}; the clock only moves forward`;
    return at;
  }
  return 'Give advanceMs (milliseconds) or to (an ISO time)';
}

export function adminRoutes(options: AdminOptions): HostRouteHandler {
  const { keys, clock, clockControl } = options;
  const clockState = (): unknown => ({ now: new Date(clock.now()).toISOString(), virtual: clock.virtual });
  return async (req, res, url) => {
    const path = url.pathname.replace(/\/+$/, '').toLowerCase();
    const method = req.method ?? 'GET';
    // The master key, always: the real host's admin API is never open; a lesser key it knows is 403
    // (devhost/docs/real-host.md#keys).
    const refusal = keys.adminRefusal(KeyPolicy.presented(req, url.searchParams));
    if (refusal !== undefined) {
      res.statusCode = refusal;
      for (const [name, value] of Object.entries(KeyPolicy.refusalHeaders(refusal))) res.setHeader(name, value);
      res.setHeader('Content-Length', 0);
      res.end();
      return true;
    }
    if (path === '/admin/host/status' && method === 'GET') {
      json(res, 200, {
        id: options.hostId,
        state: 'Running',
        version: '4.0.0-devhost',
        versionDetails: 'devhost (offline Functions host for Node.js programming model v4)',
        // The members the real host adds; empty or Unknown where it runs outside App Service too.
        platformVersion: '',
        instanceId: '',
        computerName: '',
        processUptime: Date.now() - options.startedAt,
        functionAppContentEditingState: 'Unknown',
      });
      return true;
    }
    if (path === '/admin/functions' && method === 'GET') {
      json(res, 200, options.functions());
      return true;
    }
    const named = /^\/admin\/functions\/([^/]+)$/.exec(path);
    if (named !== null) {
      const name = decodeURIComponent(named[1] as string);
      const fn = options.functions().find((f) => f.name.toLowerCase() === name);
      if (fn === undefined) {
        problem(res, 404, 'Not Found', `No function named ${name}`);
        return true;
      }
      if (method === 'GET') {
        json(res, 200, fn);
        return true;
      }
      if (method === 'POST') {
        let body: unknown;
        try {
          body = await readJson(req);
        } catch {
          problem(res, 400, 'Bad Request', 'The body is not valid JSON');
          return true;
        }
        const input = (body as { input?: unknown }).input;
        if (!options.runNow(fn.name, typeof input === 'string' ? input : input === undefined ? undefined : JSON.stringify(input))) {
          problem(
            res,
            400,
            'Bad Request',
            `Function ${fn.name} cannot be run from the admin API (HTTP-triggered, disabled or served by an extension)`,
          );
          return true;
        }
        res.statusCode = 202;
        res.setHeader('Content-Length', 0);
        res.end();
        return true;
      }
    }
    if (path === '/admin/devhost/clock') {
      if (method === 'GET') {
        json(res, 200, clockState());
        return true;
      }
      if (method === 'POST') {
        if (!clock.virtual) {
          problem(res, 409, 'Conflict', 'The clock is real; start the host with DEVHOST_VIRTUAL_CLOCK=true to move it');
          return true;
        }
        let body: unknown;
        try {
          body = await readJson(req);
        } catch {
          problem(res, 400, 'Bad Request', 'The body is not valid JSON');
          return true;
        }
        const target = clockTarget(body, clock.now());
        if (typeof target === 'string') {
          problem(res, 400, 'Bad Request', target);
          return true;
        }
        try {
          const steps = await clockControl.advanceTo(target);
          json(res, 200, { ...(clockState() as object), steps });
        } catch (err) {
          if (!isDevhostError(err, 'SettleTimeout')) throw err;
          problem(res, 504, 'Gateway Timeout', err.message);
        }
        return true;
      }
    }
    return false;
  };
}
