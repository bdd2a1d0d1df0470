/**
 * Who owns what the callers make (docs/security.md "Ownership"): jobs, schedules and gated runs
 * record their maker's Caller id (shared/identity/caller.ts) as `owner`, and a job the app submits
 * for a schedule or gated run records that one's owner. Reading, cancelling, retrying and
 * triggering need the owner or an admin; anyone else is answered as if the id named nothing
 * (404), so an id is no capability and a stranger cannot tell a resource from nothing.
 *
 * A root module: the capabilities check ownership without knowing how a caller was identified.
 */

/** Who reads or acts: a Caller has this shape. */
export interface Reader {
  readonly id: string;
  readonly roles: { readonly admin: boolean };
}

/**
 * Whether `reader` may see and act on a resource of `owner`. A record written before owners were
 * recorded has none (`undefined`): an admin's only.
 */
export function owns(reader: Reader, owner: string | undefined): boolean {
  return reader.roles.admin || (owner !== undefined && owner === reader.id);
}
