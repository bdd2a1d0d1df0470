/** What every gates route shares: its dependencies and the answers they document alike. */
import { type HttpResult, json } from '../http/responses';
import { problem } from '../http/schemas';
import type { DurableClient } from '../durable/client';
import type { GateAuditLog } from './audit';
import { gateEtag } from './etag';
import type { GateSnapshot } from './operations';
import { viewOf } from './schemas';
import type { GateReader } from './reader';
import type { GateCommands } from './service';
import type { WaitingDeps } from './waiting';

/** What the routes use of the capability (its front door, shared/gates/index.ts). */
interface GatesOfRoutes {
  readonly reader: GateReader;
  /** A route that changes a gate gives the commands the Durable client of the invocation being served. */
  commands(durable: DurableClient): GateCommands;
  readonly waiting: WaitingDeps;
  readonly audit: GateAuditLog;
}

export interface GateRouteDeps {
  /** Lazy, so the route list can be built (e.g. for the OpenAPI document) without the app or any I/O. */
  readonly gates: () => GatesOfRoutes;
}

export const tags = ['gates'];
export const badRequest = problem('Invalid name, query or body; nothing was changed');
export const notFound = problem('No such gate');
export const unavailable = problem('Storage or the Durable task hub is unavailable; retry after Retry-After');

export function gateResult(status: number, gate: GateSnapshot, extra: Readonly<Record<string, string>> = {}): HttpResult {
  return json(status, viewOf(gate), { etag: gateEtag(gate), 'cache-control': 'no-cache', ...extra });
}
