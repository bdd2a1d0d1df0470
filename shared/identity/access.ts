/**
 * What a route asks of its caller beyond what the host checked (docs/security.md "Roles"): each route
 * of shared/http/authorization.ts names one role, checked here before anything of the request body is
 * read. An admin holds every role. `owner` lets submitters and admins through the door; which
 * resource is theirs is decided where the resource is read (shared/ownership.ts: 404 to anyone else).
 */
import { type Caller, hasAnyRole } from './caller';
import { forbidden } from './refusal';

/**
 * `anonymous`: anyone; `identified`: any identity the app resolved (what the host or a token let in), with
 * or without a role; `caller`: an identity holding some role; `submitter`; `worker`: a worker of
 * the processor the request names; `owner`: the owner of the resource the request names, or an
 * admin; `admin`.
 */
export type RouteRole = 'anonymous' | 'identified' | 'caller' | 'submitter' | 'worker' | 'owner' | 'admin';

/** The processor a worker route acts on, and the caller ids its declaration names as its workers. */
export interface ProcessorWorkers {
  readonly processor: string;
  readonly workers: readonly string[];
}

/** Whether the caller works every processor (admin, or `worker:*`): then no declaration need be read to know. */
export function worksAll(caller: Caller): boolean {
  return caller.roles.admin || caller.roles.workerOf === '*';
}

/** Whether the caller may lease, extend and complete this processor's batches. */
function isWorkerOf(caller: Caller, target: ProcessorWorkers): boolean {
  const { admin, workerOf } = caller.roles;
  return admin || workerOf === '*' || workerOf.includes(target.processor) || target.workers.includes(caller.id);
}

/**
 * Refuses (403 naming the role) a caller that lacks the route's role. For `worker`, `target` is the
 * processor the request names when it names one that exists; without one (no such processor, not a
 * lease of this app) any identity with a role passes and the route answers its own 404, which tells
 * nothing about other processors.
 */
export function requireRole(caller: Caller, role: RouteRole, target?: ProcessorWorkers): void {
  switch (role) {
    case 'anonymous':
    case 'identified':
      return;
    case 'admin':
      if (!caller.roles.admin) throw forbidden('This operation needs the admin role');
      return;
    case 'caller':
      if (!hasAnyRole(caller)) throw forbidden('This caller holds no role in this app');
      return;
    case 'submitter':
    case 'owner':
      if (!caller.roles.admin && !caller.roles.submitter) throw forbidden('This operation needs the submitter role');
      return;
    case 'worker':
      if (target === undefined ? !hasAnyRole(caller) : !isWorkerOf(caller, target)) {
        throw forbidden(`This operation needs the worker role of processor ${target?.processor ?? '(any)'}`);
      }
      return;
  }
}
