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

  it('compares bodies by type, with … for more members, more elements or any value', () => {
    const shape = parseShape('{"a":"x","b":[1,…],"c":…,…} trailing prose').shape;
    expect(shapeMismatches(shape, { a: 'y', b: [2, 3], c: null, d: true })).toEqual([]);
    expect(shapeMismatches(shape, { a: 1, b: [], c: 0 })).toEqual([
      '$.a: expected string, got 1',
      '$.b: expected at least 1 elements, got 0',
    ]);
    const closed = parseShape('{"a":null,"b":[]}').shape;
    expect(shapeMismatches(closed, { a: null, b: [], c: 1 })).toEqual(['$: undocumented members c (add them, or "…")']);
    expect(shapeMismatches(closed, { a: 'x', b: [1] })).toEqual(['$.a: expected null, got "x"', '$.b: expected 0 elements, got 1']);
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
