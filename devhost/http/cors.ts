/**
 * CORS from local.settings.json `Host.CORS` (comma-separated origins or `*`) and `Host.CORSCredentials`,
 * as Core Tools applies it through ASP.NET Core's CORS middleware: any method and header allowed,
 * preflights answered 204 before routing, simple requests get `Access-Control-Allow-Origin`.
 *
 * Without `Host.CORS` only pages served from this machine (loopback origins, any port) may call the
 * host, so a web page elsewhere cannot drive a local instance (security finding 9). An origin may
 * end in `:*` for any port; that is the devhost's, ASP.NET Core matches ports exactly.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Loopback origins on any port: the default when `Host.CORS` is not set. */
const defaultOrigins = 'http://localhost:*,http://127.0.0.1:*,http://[::1]:*';

export class CorsPolicy {
  private readonly any: boolean;
  private readonly origins: Set<string>;

  constructor(
    setting: string | undefined,
    private readonly credentials: boolean,
  ) {
    const list = (setting ?? defaultOrigins)
      .split(',')
      .map((o) => o.trim().replace(/\/+$/, '').toLowerCase())
      .filter((o) => o !== '');
    this.any = list.includes('*');
    this.origins = new Set(list);
  }

  get enabled(): boolean {
    return this.any || this.origins.size > 0;
  }

  private allowedOrigin(origin: string): string | undefined {
    if (this.any) return this.credentials ? origin : '*';
    const lower = origin.toLowerCase();
    if (this.origins.has(lower)) return origin;
    const port = /^(.*):\d{1,5}$/.exec(lower);
    return port !== null && this.origins.has(`${port[1] as string}:*`) ? origin : undefined;
  }

  /** Answers a preflight; returns true when it did. */
  preflight(req: IncomingMessage, res: ServerResponse): boolean {
    const origin = req.headers.origin;
    const method = req.headers['access-control-request-method'];
    if (!this.enabled || req.method !== 'OPTIONS' || origin === undefined || method === undefined) return false;
    const allowed = this.allowedOrigin(origin);
    if (allowed !== undefined) {
      res.setHeader('Access-Control-Allow-Origin', allowed);
      res.setHeader('Access-Control-Allow-Methods', method);
      const headers = req.headers['access-control-request-headers'];
      if (headers !== undefined && headers !== '') res.setHeader('Access-Control-Allow-Headers', headers);
      if (this.credentials) res.setHeader('Access-Control-Allow-Credentials', 'true');
      if (allowed !== '*') res.setHeader('Vary', 'Origin');
    }
    res.statusCode = 204;
    res.end();
    return true;
  }

  /** Headers for an actual (non-preflight) cross-origin request. */
  apply(req: IncomingMessage, res: ServerResponse): void {
    const origin = req.headers.origin;
    if (!this.enabled || origin === undefined) return;
    const allowed = this.allowedOrigin(origin);
    if (allowed === undefined) return;
    res.setHeader('Access-Control-Allow-Origin', allowed);
    if (this.credentials) res.setHeader('Access-Control-Allow-Credentials', 'true');
    if (allowed !== '*') res.setHeader('Vary', 'Origin');
  }
}
