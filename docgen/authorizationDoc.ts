/**
 * The authorization table as Markdown, for docs/security.md: one row per route in catalog order.
 * A unit test compares the block in docs/security.md with this output, so the page cannot drift from
 * the table the host enforces (shared/http/authorization.ts).
 */
import { authorizationOf } from '../shared/http/authorization';
import type { RouteDefinition } from '../shared/http/route';

const levelText = { anonymous: 'anonymous', function: 'function key', admin: '**admin key**' } as const;

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
    (r) => `| \`${r.name}\` | ${r.anyMethod === true ? 'any' : r.method} | \`/api/${r.path}\` | ${levelText[r.auth]} | ${ruleText(r)} |`,
  );
  return [
    '| route | method | path | key needed | rule where the body decides, and notes |',
    '| --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}
