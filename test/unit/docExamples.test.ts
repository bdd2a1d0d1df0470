import { isDeepStrictEqual } from 'node:util';

import { documentedRoutes } from '../../shared/app/routes';
import type { RouteDefinition } from '../../shared/http/route';
import {
  documentationPages,
  type ExampleStep,
  parseExamplePage,
  parseShape,
  readExamplePage,
  shapeMismatches,
} from '../support/docExamples';

const repoRoot = `${__dirname}/../..`;

describe('the doc example reader', () => {
  it('reads commands, their continuation lines and the status and shape documented below them', () => {
    const page = parseExamplePage(
      'p.md',
      [
        '<!-- example-settings: A=1 B=two -->',
        '```sh',
        '# prose before',
        "curl -X PUT http://localhost:7071/api/x -d '{",
        '  "a": 1}\'   # 201',
        'curl http://localhost:7071/api/x \\',
        '  -H "a: b"',
        '# 200 {"a":1,',
        '#  "b":[…]}   (and prose after)',
        'curl http://localhost:7071/api/y   # every y, in order',
        '```',
      ].join('\n'),
    );
    expect(page.settings).toEqual({ A: '1', B: 'two' });
    const steps: Array<Pick<ExampleStep, 'line' | 'command'> & { status?: number; text?: string }> = page.steps.map((s) => ({
      line: s.line,
      command: s.command,
      ...(s.expect.status === undefined ? {} : { status: s.expect.status }),
      ...(s.expect.text === undefined ? {} : { text: s.expect.text }),
    }));
    expect(steps).toEqual([
      { line: 4, command: 'curl -X PUT http://localhost:7071/api/x -d \'{\n  "a": 1}\'', status: 201 },
      { line: 6, command: 'curl http://localhost:7071/api/x \\\n  -H "a: b"', status: 200, text: '{"a":1,\n "b":[…]}' },
      { line: 10, command: 'curl http://localhost:7071/api/y' },
    ]);
  });

  it('skips a block marked azure-only, refuses unknown markers and curl outside sh blocks', () => {
    const marked = parseExamplePage('p.md', '<!-- example: azure-only: needs Azure -->\n\n```sh\ncurl https://x/api/health\n```\n');
    expect(marked.steps.map((s) => s.skip)).toEqual(['azure-only: needs Azure']);
    expect(() => parseExamplePage('p.md', '<!-- example: later -->\n```sh\ncurl http://x\n```\n')).toThrow('unknown example marker');
    expect(() => parseExamplePage('p.md', '```bash\ncurl http://x\n```\n')).toThrow('belongs in a ```sh block');
  });

  it('compares literals exactly, with … for more members, more elements or any value', () => {
    const shape = parseShape('{"a":"x","b":[1,…],"c":…,"d":true,…} trailing prose').shape;
    expect(shapeMismatches(shape, { a: 'x', b: [1, 3], c: null, d: true, e: 0 })).toEqual([]);
    expect(shapeMismatches(shape, { a: 'ok', b: [], c: 0, d: false })).toEqual([
      '$.a: expected "x", got "ok"',
      '$.b: expected at least 1 elements, got 0',
      '$.d: expected true, got false',
    ]);
    expect(shapeMismatches(shape, { a: 'x', b: [2], c: 0, d: true })).toEqual(['$.b[0]: expected 1, got 2']);
    const closed = parseShape('{"a":null,"b":[]}').shape;
    expect(shapeMismatches(closed, { a: null, b: [], c: 1 })).toEqual(['$: undocumented members c (add them, or "…")']);
    expect(shapeMismatches(closed, { a: 'x', b: [1] })).toEqual(['$.a: expected null, got "x"', '$.b: expected 0 elements, got 1']);
  });

  it('matches placeholders for what varies: <id>, <time>, <etag>, <text>, alone or inside a string', () => {
    const shape = parseShape(
      '{"id":"<id>","at":"<time>","uri":"/api/jobs/<id>/results","etag":"<etag>","note":"<text>","tag":"<b>"}',
    ).shape;
    const fits = {
      id: 'j-7f3a',
      at: '2026-11-27T04:30:00.123Z',
      uri: '/api/jobs/j-7f3a/results',
      etag: '"g1.c.abc"',
      note: 'anything at all',
      tag: '<b>',
    };
    expect(shapeMismatches(shape, fits)).toEqual([]);
    expect(shapeMismatches(shape, { ...fits, id: '', at: 'yesterday', uri: '/api/jobs/a/b/results', tag: 'b', note: 1 })).toEqual([
      '$.id: expected "<id>", got ""',
      '$.at: expected "<time>", got "yesterday"',
      '$.uri: expected "/api/jobs/<id>/results", got "/api/jobs/a/b/results"',
      '$.note: expected "<text>", got 1',
      '$.tag: expected "<b>", got "b"',
    ]);
  });
});

/** The method, API path and literal JSON body of a curl example, when it has all three. */
function requestOf(command: string): { method: string; path: string; body: unknown } | undefined {
  if (!/^curl\s/.test(command)) return undefined;
  const url = /https?:\/\/[^\s'"]+?\/api\/([^\s'"?]*)/.exec(command)?.[1];
  const data = /\s-d\s+'([{[][^']*)'/.exec(command)?.[1];
  if (url === undefined || data === undefined) return undefined;
  const method = /-X\s+([A-Z]+)/.exec(command)?.[1] ?? 'POST';
  return { method, path: url, body: JSON.parse(data) as unknown };
}

function routeFor(routes: readonly RouteDefinition[], method: string, path: string): RouteDefinition | undefined {
  return routes.find((r) => {
    if (r.method !== method) return false;
    const pattern = r.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\}/g, '[^/]+');
    return new RegExp(`^${pattern}$`).test(path);
  });
}

describe('doc examples and the OpenAPI document', () => {
  // The API reference (/api/docs) shows each route's `examples`; the docs' examples are executed by
  // test/e2e/docs.test.ts. Every request body a page sends must be one of its route's examples, so
  // the reference shows what the manual runs.
  const routes = documentedRoutes();
  const bodies = documentationPages(repoRoot)
    .flatMap((page) => readExamplePage(repoRoot, page).steps)
    .filter((step) => step.skip === undefined)
    .flatMap((step) => {
      const request = requestOf(step.command);
      return request === undefined ? [] : [{ where: `${step.page}:${step.line}`, ...request }];
    });

  it('finds the request bodies of the examples', () => {
    expect(bodies.length).toBeGreaterThan(15);
  });

  it.each(bodies.map((b) => [`${b.where} ${b.method} /api/${b.path}`, b] as const))('%s is among its route examples', (_name, b) => {
    const route = routeFor(routes, b.method, b.path);
    expect(route).toBeDefined();
    const examples = route?.examples ?? [];
    expect(examples.some((example) => isDeepStrictEqual(example, b.body)) ? 'listed' : { body: b.body, examples }).toBe('listed');
  });
});

describe('doc pages name their own resources', () => {
  // Each page's examples are checked on a fresh host, but a reader runs them one page after another
  // on one `npm start`: a sequence, counter, gate, stream, processor or schedule that two pages both
  // use would make the later page's answers differ from what it shows.
  const named = new Map<string, Set<string>>();
  const add = (name: string, page: string): void => {
    const pages = named.get(name) ?? new Set<string>();
    pages.add(page);
    named.set(name, pages);
  };
  for (const page of documentationPages(repoRoot)) {
    for (const step of readExamplePage(repoRoot, page).steps) {
      for (const m of step.command.matchAll(/\/api\/(sequences|counters|gates|streams|processors)\/([A-Za-z0-9][\w.-]*)/g))
        add(`${m[1]}/${m[2]}`, page);
      for (const m of step.command.matchAll(/"gate"\s*:\s*"([^"]+)"/g)) add(`gates/${m[1]}`, page);
      if (/\/api\/schedules\b/.test(step.command))
        for (const m of step.command.matchAll(/\{\s*"id"\s*:\s*"([^"]+)"/g)) add(`schedules/${m[1]}`, page);
    }
  }

  it('finds names on several pages', () => {
    expect(new Set([...named.values()].flatMap((pages) => [...pages])).size).toBeGreaterThan(5);
  });

  it('no name is used by two pages', () => {
    const shared = [...named].filter(([, pages]) => pages.size > 1).map(([name, pages]) => `${name}: ${[...pages].join(', ')}`);
    expect(shared).toEqual([]);
  });
});
