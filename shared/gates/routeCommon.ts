/** What every gates route shares: its dependencies and the answers they document alike. */
import { type HttpResult, json } from '../http/responses';
import { problem } from '../http/schemas';
import type { DurableClient } from '../durable/client';
import type { GateAuditLog } from './audit';
import { gateEtag } from './etag';
import type { GateSnapshot } from './operations';
import { viewOf } from './schemas';
import type { GateService } from './service';
import type { WaitingDeps } from './waiting';

export interface GateRouteDeps {
  /** The service; a route that may start Durable work gives it the client of the invocation being served. */
  readonly service: (durable?: DurableClient) => GateService;
  /** Lazy, so the route list can be built (e.g. for the OpenAPI document) without any I/O. */
  readonly waiting: () => WaitingDeps;
  readonly audit: () => GateAuditLog;
}

export const tags = ['gates'];
export const badRequest = problem('Invalid name, query or body; nothing was changed');
export const notFound = problem('No such gate');
export const unavailable = problem('Storage or the Durable task hub is unavailable; retry after Retry-After');

export function gateResult(status: number, gate: GateSnapshot, extra: Readonly<Record<string, string>> = {}): HttpResult {
  return json(status, viewOf(gate), { etag: gateEtag(gate), 'cache-control': 'no-cache', ...extra });
}
