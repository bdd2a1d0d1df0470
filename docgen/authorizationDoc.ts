/**
 * The authorization table as Markdown, for docs/security.md: one row per route in catalog order, with
 * the key level the host checks and the role the app checks (the role table of docs/security.md).
 * A unit test compares the block in docs/security.md with this output, so the page cannot drift from
 * the table the host enforces (shared/http/authorization.ts).
 */
import { authorizationOf } from '../shared/http/authorization';
import type { RouteDefinition } from '../shared/http/route';

const levelText = { anonymous: 'anonymous', function: 'function key', admin: '**admin key**' } as const;

/** The role column (shared/identity/access.ts): who the app lets through, and what anyone else gets. */
const roleText = {
  anonymous: 'anyone',
  caller: 'any caller with a role',
  identified: 'any identity (with or without a role)',
  submitter: 'submitter (403 otherwise)',
  worker: "worker of the route's processor (403 otherwise)",
  owner: "the resource's owner or an admin (a submitter who is not: 404; others: 403)",
  admin: '**admin** (403 otherwise)',
} as const;

function ruleText(route: RouteDefinition): string {
  const auth = authorizationOf(route.name);
  const parts: string[] = [];
  if (auth.adminOnly !== undefined) {
    const values = auth.adminOnly.values.map((v) => `\`${v}\``).join(', ');
    parts.push(`\`${auth.adminOnly.field}\` ${values}: 403, use \`${auth.adminOnly.adminRoute}\``);
  }
  if (auth.note !== undefined) parts.push(auth.note);
  return parts.join(' ').replace(/\|/g, '\\|');
}

export const authorizationBlock = {
  begin: '<!-- BEGIN:authorization (generated from shared/http/authorization.ts) -->',
  end: '<!-- END:authorization -->',
};

export function authorizationMarkdown(routes: readonly RouteDefinition[]): string {
  const rows = routes.map(
    (r) =>
      `| \`${r.name}\` | ${r.anyMethod === true ? 'any' : r.method} | \`/api/${r.path}\` | ${levelText[r.auth]} | ` +
      `${roleText[authorizationOf(r.name).role]} | ${ruleText(r)} |`,
  );
  return [
    '| route | method | path | key needed (keys modes) | role needed | rule where the body decides, and notes |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}
