/**
 * What a route's level asks of its caller, beyond what the host checked (docs/security.md "Modes"):
 * an admin-level route needs the admin role, a function-level one an identity with some role. The
 * finer rules (a processor's workers, a resource's owner) belong to the use-cases.
 */
import { type Caller, hasAnyRole, type RouteLevel } from './caller';
import { forbidden } from './refusal';

export function requireLevel(caller: Caller, level: RouteLevel): void {
  if (level === 'admin' && !caller.roles.admin) throw forbidden('This operation needs the admin role');
  if (level === 'function' && !hasAnyRole(caller)) throw forbidden('This caller holds no role in this app');
}
