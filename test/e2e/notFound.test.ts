/**
 * Security finding 9, its last item: a request under `/api/` that no route serves got the host's empty
 * 404 instead of problem+json. The catch-all function (shared/http/notFound.ts) now answers it — an
 * unknown path, a path that `..` normalisation turned into an unknown one, a known path with another
 * method — with 404 problem+json naming only the method and path, the same to every caller, while
 * every other route, the host's own endpoints and the static pages answer as before.
 *
 * On the devhost with keys on. What the real host does is cited where it matters; the route order
 * that makes the catch-all last there is checked by test/unit/http/authorization.test.ts.
 */
import { request as httpRequest } from 'node:http';

import { type E2eHost, hostLabel } from './support/harness';
import { sharedE2eHost } from './support/sharedHost';
import { expectProblem, type JsonResponse, readableAnswer, requestJson } from './support/http';
import { unique } from './support/names';

type Caller = 'none' | 'function' | 'admin';
const callers: readonly Caller[] = ['none', 'function', 'admin'];

/** Sends the path exactly as given (`curl --path-as-is`): fetch would resolve `..` before sending. */
function rawGet(host: E2eHost, path: string, method = 'GET'): Promise<{ status: number; type: string | undefined; text: string }> {
  const base = new URL(host.baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: base.hostname, port: base.port, method, path }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], text: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe(`the catch-all 404 (${hostLabel()}, keys on)`, () => {
  let host: E2eHost;

  beforeAll(async () => {
    host = await sharedE2eHost();
  });
  afterAll(async () => {
    await host.dispose();
  });

  const readable = (res: JsonResponse): string => readableAnswer(res.headers, res.body);

  test("TRACE (which no route registers) is the host's empty 404 under /api, never a 500: the real host cannot hand it to a stream-mode worker (devhost/docs/real-host.md#routing)", async () => {
    for (const path of ['/api/health', `/api/${unique('nope')}`, '/api/sequences/x']) {
      const res = await rawGet(host, path, 'TRACE');
      expect({ path, status: res.status, text: res.text }).toEqual({ path, status: 404, text: '' });
    }
  });

  test('an unknown path under /api answers 404 problem+json naming only the path, the same without a key and with either', async () => {
    const path = `/api/${unique('nope')}/deeper`;
    for (const key of callers) {
      // A body and a query string that must not come back: the catch-all reads neither.
      const res = await requestJson(host, 'POST', `${path}?secret=query-${key}`, { key, body: { secret: `body-${key}` } });
      const problem = expectProblem(res, 404, 'NotFound');
      expect({ key, instance: problem.instance, detail: problem.detail }).toEqual({
        key,
        instance: path,
        detail: `No endpoint answers POST ${path}`,
      });
      const seen = readable(res);
      for (const leak of [`query-${key}`, `body-${key}`, 'code=', host.keys.admin ?? 'code=', host.keys.function ?? 'code='])
        expect({ key, leaked: seen.includes(leak), leak }).toEqual({ key, leaked: false, leak });
    }
  });

  test('a path that `..` normalisation turns into an unknown one answers 404 problem+json for the path that was routed', async () => {
    // Kestrel and the devhost resolve dot segments before routing (devhost/README.md), so this is /api/nope.
    const res = await rawGet(host, '/api/sequences/../nope');
    expect({ status: res.status, type: res.type }).toEqual({ status: 404, type: expect.stringMatching(/^application\/problem\+json/) });
    expect(JSON.parse(res.text)).toMatchObject({ status: 404, code: 'NotFound', instance: '/api/nope' });
    // `..` that lands on a served route is that route (the health check is anonymous).
    expect((await rawGet(host, '/api/sequences/../health')).status).toBe(200);
  });

  test('a known route with another method answers 404 problem+json, without a key and with one', async () => {
    // The real host answers 404 here, not 405 (devhost/docs/real-host.md#routing): its routes are
    // an ASP.NET Core RouteCollection (azure-functions-host WebScriptHostHttpRoutesManager) in which a route
    // whose HttpMethodRouteConstraint fails does not match and the next one is tried (dotnet/aspnetcore
    // RouteBase.RouteAsync, RouteCollection.RouteAsync), which ends at the catch-all. Read in the sources,
    // not yet run on the real host with the catch-all in place.
    for (const [method, path] of [
      ['DELETE', '/api/health'],
      ['POST', '/api/openapi.json'],
      ['PUT', `/api/sequences/${unique('s')}/next`],
    ] as const) {
      for (const key of callers) {
        const problem = expectProblem(await requestJson(host, method, path, { key }), 404, 'NotFound');
        expect({ key, detail: problem.detail }).toEqual({ key, detail: `No endpoint answers ${method} ${path}` });
      }
    }
  });

  test('served routes still answer as before: their own answers, their own 401s, the static pages and assets', async () => {
    expect((await requestJson(host, 'GET', '/api/health', { key: 'none' })).status).toBe(200);
    // A function-level route without a key is still refused by the host, not answered by the catch-all.
    expect((await requestJson(host, 'GET', `/api/sequences/${unique('s')}`, { key: 'none' })).status).toBe(401);
    // A handler's own 404 is still its own.
    const missing = expectProblem(await requestJson(host, 'GET', `/api/sequences/${unique('s')}`, { key: 'function' }), 404, 'NotFound');
    expect(missing.detail).not.toMatch(/^No endpoint answers/);

    for (const [page, asset] of [
      ['/api/console', /\/api\/console\/assets\/console-[A-Z0-9]+\.js/],
      ['/api/docs', /\/api\/docs\/assets\/apidocs-[A-Z0-9]+\.js/],
    ] as const) {
      const html = await requestJson<string>(host, 'GET', page, { key: 'none' });
      expect({ page, status: html.status, type: html.headers.get('content-type') }).toEqual({
        page,
        status: 200,
        type: 'text/html; charset=utf-8',
      });
      const script = asset.exec(html.body)?.[0];
      expect(script).toBeDefined();
      const file = await fetch(host.url(script!));
      expect({ script, status: file.status }).toEqual({ script, status: 200 });
      // An asset that does not exist is the asset route's 404, which names the asset.
      const gone = expectProblem(await requestJson(host, 'GET', `${page}/assets/nope-AAAA.js`, { key: 'none' }), 404, 'NotFound');
      expect(gone.detail).toMatch(/has no asset "nope-AAAA\.js"/);
      // Below an asset, the catch-all answers (no route has a deeper template).
      expectProblem(await requestJson(host, 'GET', `${page}/assets/a/b`, { key: 'none' }), 404, 'NotFound');
    }
  });

  test('outside /api the host answers as before: its admin API, and its empty 404 elsewhere', async () => {
    // The template sits under the `api` prefix; on the real host /admin/* is not even offered to function
    // routes (azure-webjobs-sdk-extensions WebJobsRouter.RouteAsync) and /runtime/webhooks/* is outside `api/`.
    expect((await requestJson(host, 'GET', '/admin/host/status', { key: 'admin' })).status).toBe(200);
    for (const path of ['/admin/nope', '/runtime/webhooks/nope', '/nope']) {
      const res = await requestJson(host, 'GET', path, { key: 'admin' });
      expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 404, body: undefined });
    }
  });
});
