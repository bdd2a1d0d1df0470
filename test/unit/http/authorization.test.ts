/**
 * The authorization table (shared/http/authorization.ts) is the one declaration of who may call what:
 * every documented route has an entry and every entry is a route; body rules point at admin routes;
 * the OpenAPI document states exactly the table's levels; docs/security.md shows the generated table;
 * and level claims in README.md and docs/ agree with it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { capabilityTags, documentedRoutes } from '../../../shared/app/routes';
import { isAppError } from '../../../shared/errors';
import { authorization, authorizationOf, refuseAdminOnly, routeNames } from '../../../shared/http/authorization';
import { authorizationBlock, authorizationMarkdown } from '../../../docgen/authorizationDoc';
import { buildOpenApiDocument } from '../../../shared/openapi/document';
import { openApiPath } from '../../../shared/http/routeTemplate';

const routes = documentedRoutes();
const repoRoot = join(__dirname, '..', '..', '..');

describe('the authorization table', () => {
  test('names exactly the routes of the catalog, and each route registers with the level the table gives it', () => {
    expect(routes.map((r) => r.name).sort()).toEqual(routeNames().sort());
    for (const route of routes)
      expect({ route: route.name, level: route.auth }).toEqual({ route: route.name, level: authorizationOf(route.name).level });
  });

  test('every body rule names values it refuses and an admin-level route with the same method that accepts them', () => {
    const rules = routes.flatMap((r) => {
      const rule = authorizationOf(r.name).adminOnly;
      return rule === undefined ? [] : [{ route: r, rule }];
    });
    expect(rules.length).toBeGreaterThan(0);
    for (const { route, rule } of rules) {
      expect(route.auth).not.toBe('admin');
      expect(rule.values.length).toBeGreaterThan(0);
      const twin = routes.find((r) => r.name === rule.adminRoute);
      expect({ twin: twin?.name, level: twin?.auth, method: twin?.method }).toEqual({
        twin: rule.adminRoute,
        level: 'admin',
        method: route.method,
      });
    }
  });

  test('refuseAdminOnly: a reserved value is a 403 naming the field and the admin route; any other passes', () => {
    let caught: unknown;
    try {
      refuseAdminOnly('schedulesCreate', 'gateRelease', 'POST /api/schedules/privileged');
    } catch (err) {
      caught = err;
    }
    expect(isAppError(caught)).toBe(true);
    expect(caught).toMatchObject({
      code: 'Forbidden',
      status: 403,
      issues: [{ path: 'body.target.type', message: expect.stringContaining('POST /api/schedules/privileged') }],
      extra: { adminRoute: 'schedulesCreatePrivileged' },
    });
    expect(() => refuseAdminOnly('schedulesCreate', 'queueMessage', 'x')).not.toThrow();
    // A route without a rule refuses nothing.
    expect(() => refuseAdminOnly('schedulesCreatePrivileged', 'gateRelease', 'x')).not.toThrow();
  });

  test('the OpenAPI document states exactly the level of each operation', () => {
    const doc = buildOpenApiDocument(routes, { title: 'Tallyho', version: '1', description: 't', serverUrl: '/api', tags: capabilityTags });
    const expected = {
      anonymous: [],
      function: ['adminKey', 'adminKeyQuery', 'functionKey', 'functionKeyQuery'],
      admin: ['adminKey', 'adminKeyQuery'],
    };
    const paths = doc.paths as Record<string, Record<string, { operationId: string; security: Record<string, unknown>[] }>>;
    const operationIds = Object.values(paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
    for (const route of routes) {
      // The catch-all is no operation (shared/http/notFound.ts): the document leaves it out.
      if (route.anyMethod === true) {
        expect(operationIds).not.toContain(route.name);
        continue;
      }
      const op = paths[openApiPath(route.path)]?.[route.method.toLowerCase()];
      expect(op?.operationId).toBe(route.name);
      const schemes = (op?.security ?? []).flatMap((s) => Object.keys(s)).sort();
      expect({ route: route.name, schemes }).toEqual({ route: route.name, schemes: expected[authorization[route.name].level] });
    }
  });

  test('the catch-all is also the last HTTP function in function-name order, so it shadows no other route there', () => {
    // The HTTP extension orders routes by specificity (the catch-all comes last; the devhost e2e tests
    // prove it), but older builds mapped them in the host's function order, which is by name
    // (OrdinalIgnoreCase: upper-cased code units), taking the first that matches (shared/http/notFound.ts).
    const catchAlls = routes.filter((r) => r.anyMethod === true);
    expect(catchAlls.map((r) => ({ name: r.name, path: r.path }))).toEqual([{ name: 'zzNotFound', path: '{*path}' }]);
    const hostOrder = routes
      .map((r) => r.name)
      .sort((a, b) => {
        const x = a.toUpperCase();
        const y = b.toUpperCase();
        return x < y ? -1 : x > y ? 1 : 0;
      });
    expect(hostOrder[hostOrder.length - 1]).toBe('zzNotFound');
    expect(hostOrder.filter((n) => n.toUpperCase() === 'ZZNOTFOUND')).toEqual(['zzNotFound']);
  });

  test('docs/security.md carries the generated table', () => {
    const text = readFileSync(join(repoRoot, 'docs', 'security.md'), 'utf8');
    const start = text.indexOf(authorizationBlock.begin);
    const end = text.indexOf(authorizationBlock.end);
    expect(start).toBeGreaterThanOrEqual(0);
    expect(end).toBeGreaterThan(start);
    const block = text.slice(start + authorizationBlock.begin.length, end);
    // Cell by cell, so Prettier's column padding does not count. On a difference, paste
    // authorizationMarkdown(documentedRoutes()) between the markers.
    expect(cells(block)).toEqual(cells(authorizationMarkdown(routes)));
  });

  test('README.md and docs/ claim no level a route does not have ("`POST /api/…` (admin)")', () => {
    const files = [
      'README.md',
      ...readdirSync(join(repoRoot, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => join('docs', f)),
    ];
    const claim = /`(GET|POST|PUT|DELETE|PATCH) \/api\/([^`?\s]+)[^`]*`\s*\((admin|function key|anonymous)[^)]*\)/g;
    const levelOf = { admin: 'admin', 'function key': 'function', anonymous: 'anonymous' } as const;
    const claims = files.flatMap((file) =>
      [...readFileSync(join(repoRoot, file), 'utf8').matchAll(claim)].map((m) => ({
        file,
        method: m[1],
        path: m[2] ?? '',
        level: levelOf[m[3] as keyof typeof levelOf],
      })),
    );
    expect(claims.length).toBeGreaterThan(0);
    for (const c of claims) {
      // The catch-all matches any path, so a claim about a route that does not exist must not land on it.
      const route = routes.find((r) => r.anyMethod !== true && r.method === c.method && matches(r.path, c.path));
      expect({ ...c, level: route?.auth }).toEqual(c);
    }
  });
});

/** A Markdown table as rows of trimmed cells, the separator row dropped. */
function cells(table: string): string[][] {
  return table
    .trim()
    .split('\n')
    .map((row) =>
      row
        .replace(/^\||\|$/g, '')
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    )
    .filter((row) => !row.every((cell) => /^:?-+:?$/.test(cell)));
}

/** Whether a concrete or templated path (`gates/launch/release`, `gates/{name}/release`) is one of the route template. */
function matches(template: string, path: string): boolean {
  const t = template.split('/');
  const p = path.split('/');
  return t.length === p.length && t.every((seg, i) => seg === p[i] || /^\{.+\}$/.test(seg));
}
