/**
 * The request-body rules every route shares (shared/http/route.ts readBody), exercised on the app's
 * real route definitions with services that fail the test if they are reached: depth is refused
 * before validation, only JSON is read as JSON, and a body-less route refuses a body.
 */
import type { RouteDefinition } from '../../../shared/http/route';
import { gatesRoutes } from '../../../shared/gates/routes';
import { processorInfos } from '../../../shared/app/processors';
import { jobsRoutes } from '../../../shared/jobs/http/routes';
import { schedulesRoutes } from '../../../shared/schedules/routes';
import { streamsRoutes } from '../../../shared/streams/routes';
import { sequencesRoutes } from '../../../shared/sequences/routes';
import { countersRoutes } from '../../../shared/counters/routes';
import { callRoute, routeNamed, routeRequest } from '../../support/routeRequest';

interface ProblemBody {
  readonly code?: string;
  readonly issues?: readonly { readonly path: string; readonly message: string }[];
}

let reached: string[] = [];
function untouchable<T>(what: string): () => T {
  return () => {
    reached.push(what);
    throw new Error(`${what} must not be reached`);
  };
}

const routes: RouteDefinition[] = [
  ...streamsRoutes({ service: untouchable('streams') }),
  ...schedulesRoutes({ service: untouchable('schedules') }),
  ...gatesRoutes({ gates: untouchable('gates') }),
  ...jobsRoutes({ jobs: untouchable('jobs'), maxRequestBytes: 1024 * 1024, processors: processorInfos, queuePrefix: 'jobs-work' }),
  ...sequencesRoutes({ service: untouchable('sequences') }),
  ...countersRoutes({ service: untouchable('counters') }),
];

beforeEach(() => {
  reached = [];
});

function nested(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`;
}

function paramsOf(route: RouteDefinition): Record<string, string> {
  const names = [...route.path.matchAll(/\{(\w+)/g)].map((m) => m[1] ?? '');
  const sample = (n: string): string =>
    n === 'id' ? '20260301120000-4f9c2a7e1b' : n === 'leaseId' ? `${'a'.repeat(16)}.${'b'.repeat(43)}` : 'x1';
  return Object.fromEntries(names.map((n) => [n, sample(n)]));
}

describe('deep JSON is a 400, not a 500', () => {
  const item = (metadata: string) =>
    `{"id":"tx-1","customerId":"c-42","amountMinor":1999,"currency":"EUR","taxCategory":"standard","occurredAt":"2026-03-01T12:00:00Z","metadata":{"m":${metadata}}}`;
  it.each([
    ['streams data', 'streamsAppend', { type: 'orders' }, (deep: string) => `{"producer":"p","seq":1,"data":${deep}}`, 2000],
    [
      'schedules target.message',
      'schedulesCreate',
      {},
      (deep: string) => `{"at":"2030-01-01T00:00:00Z","target":{"type":"queueMessage","queue":"app-out","message":${deep}}}`,
      2000,
    ],
    [
      'gates action.payload',
      'gatesStartRun',
      { name: 'launch' },
      (deep: string) => `{"action":{"type":"enqueue","payload":${deep}}}`,
      2000,
    ],
    ['jobs items', 'jobsSubmit', {}, (deep: string) => `{"processor":"billing","items":[${item(deep)}]}`, 5000],
  ] as const)('%s nested %#', async (_label, name, params, body, depth) => {
    const res = await callRoute<ProblemBody>(routeNamed(routes, name), { params, body: body(nested(depth)) });
    expect({ status: res.status, type: res.headers['content-type'], code: res.body.code }).toEqual({
      status: 400,
      type: 'application/problem+json',
      code: 'ValidationFailed',
    });
    expect(res.body.issues).toEqual([{ path: 'body', message: 'Too deeply nested' }]);
    expect(reached).toEqual([]);
  });

  it('nesting up to the limit reaches schema validation (the depth check counts no bracket inside a string)', async () => {
    const res = await callRoute<ProblemBody>(routeNamed(routes, 'streamsAppend'), {
      params: { type: 'orders' },
      body: `{"producer":"p","seq":"not a number","data":{"s":"${'['.repeat(500)}","d":${nested(62)}}}`,
    });
    expect(res.status).toBe(400);
    expect(res.body.issues).toEqual([expect.objectContaining({ path: 'body.events.0.seq' })]);
  });
});

describe('a body must be JSON, and a body-less route takes none', () => {
  const withBody = routes.filter((r) => r.schemas.body !== undefined);
  const withoutBody = routes.filter((r) => r.schemas.body === undefined && r.method !== 'GET');

  it('the matrix covers routes of both kinds', () => {
    expect(withBody.length).toBeGreaterThan(8);
    expect(withoutBody.length).toBeGreaterThan(3);
  });

  it.each(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', undefined])(
    'a %s body is a 415 on every route that takes a body, and reaches nothing',
    async (contentType) => {
      for (const route of withBody) {
        const headers = contentType === undefined ? { 'content-type': '' } : { 'content-type': contentType };
        const res = await callRoute<ProblemBody>(route, { params: paramsOf(route), headers, body: '{"by":"x"}' });
        expect({ route: route.name, status: res.status, code: res.body.code }).toEqual({
          route: route.name,
          status: 415,
          code: 'UnsupportedMediaType',
        });
      }
      expect(reached).toEqual([]);
    },
  );

  it('application/json with a charset and +json types are JSON', async () => {
    for (const contentType of ['application/json; charset=utf-8', 'Application/JSON', 'application/merge-patch+json']) {
      const res = await callRoute<ProblemBody>(routeNamed(routes, 'streamsAppend'), {
        params: { type: 'orders' },
        headers: { 'content-type': contentType },
        body: '{"producer":"p","seq":-1}',
      });
      expect({ contentType, status: res.status, path: res.body.issues?.[0]?.path }).toEqual({
        contentType,
        status: 400,
        path: 'body.events.0.seq',
      });
    }
  });

  it('a malformed body on a body-less route is a 400 and reaches nothing', async () => {
    for (const route of withoutBody) {
      const res = await callRoute<ProblemBody>(route, { params: paramsOf(route), body: '{not json' });
      expect({ route: route.name, status: res.status, code: res.body.code, issues: res.body.issues }).toEqual({
        route: route.name,
        status: 400,
        code: 'ValidationFailed',
        issues: [{ path: 'body', message: 'Must be empty' }],
      });
    }
    expect(reached).toEqual([]);
  });
});

describe('a body is counted while it arrives and refused at the limit', () => {
  /** A chunked upload of `total` bytes made on demand, 64 KiB at a time, counting what was pulled. */
  function lazyUpload(total: number): { stream: ReadableStream<Uint8Array>; pulled: () => number; cancelled: () => boolean } {
    const chunk = new Uint8Array(64 * 1024).fill(0x20);
    let pulled = 0;
    let cancelled = false;
    const stream = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          if (pulled >= total) return controller.close();
          pulled += chunk.byteLength;
          controller.enqueue(chunk);
        },
        cancel() {
          cancelled = true;
        },
      },
      { highWaterMark: 0 },
    );
    return { stream, pulled: () => pulled, cancelled: () => cancelled };
  }

  it('a 300 MiB chunked body to a 1 KiB route is a 413 after one chunk, and the upload is cancelled', async () => {
    const route = routeNamed(routes, 'streamsRemap'); // maxBodyBytes 1024
    const upload = lazyUpload(300 * 1024 * 1024);
    const request = { ...routeRequest(route, { params: { type: 'orders' } }), body: upload.stream };
    const headers = { get: (name: string) => (name.toLowerCase() === 'content-type' ? 'application/json' : null) };
    const res = await route.run({ ...request, headers });
    expect(res.status).toBe(413);
    expect(res.jsonBody).toMatchObject({ code: 'PayloadTooLarge', detail: 'The body is more than 1024 bytes; at most 1024 are accepted' });
    expect(upload.pulled()).toBe(64 * 1024);
    await new Promise((r) => setImmediate(r));
    expect(upload.cancelled()).toBe(true);
    expect(reached).toEqual([]);
  });

  it('a body within the limit is read whole from the stream, across chunks', async () => {
    const route = routeNamed(routes, 'streamsAppend');
    const text = JSON.stringify({ producer: 'p', seq: -1, data: 'é'.repeat(40_000) });
    const bytes = new TextEncoder().encode(text);
    // Split inside a two-byte character, so decoding must see the chunks together.
    const split = bytes.indexOf(0xc3) + 1;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, split));
        controller.enqueue(bytes.slice(split));
        controller.close();
      },
    });
    const request = routeRequest(route, { params: { type: 'orders' }, headers: { 'content-type': 'application/json' } });
    const res = await route.run({ ...request, body: stream });
    expect(res.status).toBe(400);
    expect(res.jsonBody).toMatchObject({ issues: [{ path: 'body.events.0.seq' }] });
  });
});
