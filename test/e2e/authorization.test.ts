/**
 * The authorization matrix: the host (devhost, and the real host in the e2e-real run) with keys on, every route of the catalog (so a new route is
 * covered as soon as it exists) × {no key, function key, admin key}. The host must refuse (401)
 * exactly where the authorization table says and nowhere else, register exactly the table's levels,
 * and no response to a caller without the admin key may carry a key: no `code=` and neither key's
 * value, in any header or the body.
 *
 * Path parameters get valid-looking values, so a handler may well answer 404 or 400; what counts here
 * is 401 or not, and what the response carries. One gate exists under the probe name, so the gate
 * routes also answer on their success paths (a started run, its status, an event stream).
 */
import { documentedRoutes } from '../../shared/app/routes';
import { authorizationOf } from '../../shared/http/authorization';
import type { RouteDefinition } from '../../shared/http/route';
import { registeredFunctions } from './support/functions';
import { type E2eHost, hostLabel } from './support/harness';
import { sharedE2eHost } from './support/sharedHost';
import { readableAnswer, requestJson } from './support/http';
import { unique } from './support/names';

type Caller = 'none' | 'function' | 'admin';
const callers: readonly Caller[] = ['none', 'function', 'admin'];

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

const probe = unique('authz');

/** A value each path parameter accepts (names are 1-63 letters, digits, "-", "_", "."). */
const paramValues: Readonly<Record<string, string>> = { formatted: 'ORD-0000001-0', file: 'probe.txt' };

/** Requests that would otherwise hold the connection (a long-poll) answer at once. */
const queries: Readonly<Record<string, string>> = { gatesWait: '?timeout=0' };

/** Bodies that reach a success path instead of a 400, where that shows more of what a caller gets. */
const bodies: Readonly<Record<string, unknown>> = { gatesStartRun: { runId: probe } };

function pathOf(route: RouteDefinition): string {
  const path = route.path.replace(/\{(\*?)([A-Za-z]+)[^}]*\}/g, (_m, _star, name: string) => paramValues[name] ?? probe);
  return `/api/${path}${queries[route.name] ?? ''}`;
}

/** Whether a caller of this kind must be refused by the host. */
function refused(route: RouteDefinition, caller: Caller): boolean {
  const level = authorizationOf(route.name).level;
  if (level === 'anonymous') return false;
  if (level === 'function') return caller === 'none';
  return caller !== 'admin';
}

describe(`authorization matrix (${hostLabel()}, keys on)`, () => {
  let host: E2eHost;

  beforeAll(async () => {
    host = await sharedE2eHost();
    const gate = await requestJson(host, 'PUT', `/api/gates/${probe}`, { key: 'admin', body: {} });
    expect(gate.status).toBe(201);
  });
  afterAll(async () => {
    await host.dispose();
  });

  async function call(route: RouteDefinition, caller: Caller): Promise<Answer> {
    const headers: Record<string, string> = {};
    const key = caller === 'admin' ? host.keys.admin : caller === 'function' ? host.keys.function : undefined;
    if (key !== undefined) headers['x-functions-key'] = key;
    const hasBody = route.method !== 'GET' && route.method !== 'DELETE';
    if (hasBody) headers['content-type'] = 'application/json';
    // Ends an event stream once its first chunk is read (no time budget: test/support/waits.ts).
    const controller = new AbortController();
    try {
      const res = await fetch(host.url(pathOf(route)), {
        method: route.method,
        headers,
        ...(hasBody ? { body: JSON.stringify(bodies[route.name] ?? {}) } : {}),
        signal: controller.signal,
      });
      // An event stream stays open: its first chunk (the current state) is what a caller gets first.
      if (/text\/event-stream/.test(res.headers.get('content-type') ?? '')) {
        const reader = res.body?.getReader();
        const first = reader === undefined ? undefined : await reader.read();
        controller.abort();
        return {
          status: res.status,
          headers: res.headers,
          text: first?.value === undefined ? '' : Buffer.from(first.value).toString('utf8'),
        };
      }
      return { status: res.status, headers: res.headers, text: await res.text() };
    } finally {
      controller.abort();
    }
  }

  const readable = (answer: Answer): string => readableAnswer(answer.headers, answer.text);

  test('the host registers exactly the routes of the table, each with the level the table gives it', async () => {
    const registered = (await registeredFunctions(host)).flatMap((f) =>
      f.http === undefined ? [] : [{ name: f.name, level: f.http.authLevel.toLowerCase() }],
    );
    const expected = documentedRoutes().map((r) => ({ name: r.name, level: authorizationOf(r.name).level }));
    const byName = (a: { name: string }, b: { name: string }): number => a.name.localeCompare(b.name);
    expect(registered.sort(byName)).toEqual(expected.sort(byName));
  });

  test('every route × {no key, function key, admin key}: 401 exactly where the table says; no key in what non-admin callers get', async () => {
    const outcomes: { route: string; caller: Caller; refused: boolean }[] = [];
    const expected: typeof outcomes = [];
    const leaks: { route: string; caller: Caller; status: number; leak: string }[] = [];
    const catchAll: { route: string; caller: Caller; status: number; type: string | null; code: unknown }[] = [];
    let successes = 0;
    for (const route of documentedRoutes()) {
      for (const caller of callers) {
        const answer = await call(route, caller);
        outcomes.push({ route: route.name, caller, refused: answer.status === 401 });
        expected.push({ route: route.name, caller, refused: refused(route, caller) });
        // The catch-all (its path here is a single unknown segment) answers every caller alike: 404 problem+json.
        if (route.anyMethod === true) {
          const type = answer.headers.get('content-type');
          const code = /problem\+json/.test(type ?? '') ? (JSON.parse(answer.text) as { code?: unknown }).code : undefined;
          catchAll.push({ route: route.name, caller, status: answer.status, type, code });
        }
        if (answer.status < 300) successes += 1;
        if (caller === 'admin') continue;
        const seen = readable(answer);
        for (const leak of ['code=', host.keys.admin ?? 'code=', host.keys.function ?? 'code=']) {
          if (seen.includes(leak))
            leaks.push({ route: route.name, caller, status: answer.status, leak: leak === 'code=' ? leak : 'a key value' });
        }
      }
    }
    expect(outcomes).toEqual(expected);
    expect(leaks).toEqual([]);
    expect(catchAll).toEqual(
      callers.map((caller) => ({
        route: 'zzNotFound',
        caller,
        status: 404,
        type: expect.stringMatching(/^application\/problem\+json/),
        code: 'NotFound',
      })),
    );
    // The matrix also reached handlers' success paths, not only refusals and 404s.
    expect(successes).toBeGreaterThan(20);
  });

  test('the leak check bites: a Durable management link, as this host builds it, carries code=', async () => {
    // Guards the guard: were a function-level route to hand out such a link, the matrix would see it.
    const started = await requestJson<{ statusQueryGetUri?: string }>(
      host,
      'POST',
      `/runtime/webhooks/durabletask/orchestrators/gateLateActions/${encodeURIComponent(`probe-${probe}`)}`,
      { key: 'admin', body: { gate: probe, generation: 1, runIds: [] } },
    );
    expect(started.status).toBe(202);
    expect(started.body.statusQueryGetUri).toContain('code=');
  });
});
