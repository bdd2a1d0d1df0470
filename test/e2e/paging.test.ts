/**
 * Paging over HTTP, on whichever host runs the suite (the devhost; the real Functions host in
 * e2e-real): every list answers `{ items, continuationToken }`, a list longer than a page is read
 * completely by following the tokens — no duplicates, no gaps — and a bad `maxPageSize` or
 * `continuationToken` is a 400 problem that changes nothing, including a token of another list.
 */
import { transactions } from '../support/billing';
import { type E2eHost, hostLabel } from './support/harness';
import { sharedE2eHost } from './support/sharedHost';
import { expectProblem, requestJson } from './support/http';
import { type JobView, settledJob } from './support/jobs';
import { unique } from './support/names';
import { readAll, readPages } from './support/pages';

describe(`paging on the ${hostLabel()}`, () => {
  let host: E2eHost;

  beforeAll(async () => {
    host = await sharedE2eHost();
  });
  afterAll(async () => {
    await host?.dispose();
  });

  const admin = <T>(path: string) => requestJson<T>(host, 'GET', path, { key: 'admin' });
  const createGates = async (prefix: string, count: number): Promise<string[]> => {
    const names = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
    for (const name of names) expect((await requestJson(host, 'PUT', `/api/gates/${name}`, { body: {}, key: 'admin' })).status).toBe(201);
    return names.sort();
  };
  const ours = (prefix: string) => (gate: { name: string }) => gate.name.startsWith(prefix);

  test("a job's 100 results read 7 at a time: every item once, in item-id order, no page over 7", async () => {
    const items = transactions(100, 11, unique('pg'));
    const accepted = await requestJson<JobView>(host, 'POST', '/api/jobs', { body: { processor: 'billing', items } });
    expect(accepted.status).toBe(202);
    await settledJob(host, accepted.body.id);
    const pages = await readPages<{ id: string }>(host, `/api/jobs/${accepted.body.id}/results`, { maxPageSize: 7 });
    const ids = pages.flatMap((page) => page.items.map((r) => r.id));
    expect(ids).toEqual(items.map((i) => i.id).sort());
    expect(pages.every((page) => page.items.length <= 7)).toBe(true);
    expect(pages.length).toBeGreaterThanOrEqual(Math.ceil(100 / 7));
    // The last page carries no token; the others each carry one.
    expect(pages.at(-1)?.continuationToken).toBeUndefined();
    expect(pages.slice(0, -1).every((page) => typeof page.continuationToken === 'string')).toBe(true);
    expect((await requestJson(host, 'GET', `/api/jobs/${accepted.body.id}/failures`)).body).toEqual({ items: [] });
  });

  test('the gates list a page at a time: every gate once, in name order; a filtered list keeps its filter on every page', async () => {
    const prefix = unique('pgate');
    const names = await createGates(prefix, 5);
    const pages = await readPages<{ name: string }>(host, '/api/gates', { key: 'admin', maxPageSize: 2 });
    expect(pages.every((page) => page.items.length <= 2 && Array.isArray(page.unreadable))).toBe(true);
    expect(
      pages
        .flatMap((page) => page.items)
        .filter(ours(prefix))
        .map((g) => g.name),
    ).toEqual(names);

    const at = new Date(Date.now() + 30 * 86_400_000).toISOString();
    const ids = Array.from({ length: 3 }, () => unique('pgsched'));
    for (const id of ids) {
      const created = await requestJson(host, 'POST', '/api/schedules', {
        body: { id, at, target: { type: 'queueMessage', queue: 'app-paged-out', message: id } },
      });
      expect(created.status).toBe(201);
    }
    for (const id of ids.slice(0, 2))
      expect((await requestJson(host, 'POST', `/api/schedules/${id}/pause`, { key: 'admin' })).status).toBe(200);
    const paused = await readAll<{ id: string; state: string }>(host, '/api/schedules?state=paused', { key: 'admin', maxPageSize: 1 });
    expect(paused.every((s) => s.state === 'paused')).toBe(true);
    expect(paused.map((s) => s.id).filter((id) => ids.includes(id))).toEqual(ids.slice(0, 2).sort());
    for (const id of ids) expect((await requestJson(host, 'DELETE', `/api/schedules/${id}`, { key: 'admin' })).status).toBe(200);
  });

  test('a bad maxPageSize or continuationToken is a 400 ValidationFailed naming the parameter, and changes nothing', async () => {
    const prefix = unique('pbad');
    const names = await createGates(prefix, 3);
    const before = (await readAll<{ name: string }>(host, '/api/gates', { key: 'admin' })).filter(ours(prefix));
    expect(before.map((g) => g.name)).toEqual(names);

    for (const size of ['0', '1001', '-1', '1.5', 'ten', '']) {
      const problem = expectProblem(await admin(`/api/gates?maxPageSize=${size}`), 400, 'ValidationFailed');
      expect(problem.issues).toEqual([expect.objectContaining({ path: 'query.maxPageSize' })]);
    }
    // The old parameters are gone, not ignored.
    expectProblem(await admin('/api/gates?limit=5'), 400, 'ValidationFailed');
    expectProblem(await admin('/api/schedules?pageSize=5'), 400, 'ValidationFailed');

    const first = await admin<{ items: unknown[]; continuationToken?: string }>('/api/gates?maxPageSize=1');
    const token = first.body.continuationToken as string;
    expect(token).toEqual(expect.stringMatching(/^[A-Za-z0-9_-]+$/));
    const decoded = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as Record<string, unknown>;
    const bad = {
      'not the alphabet': 'not a token!',
      'too long': 'A'.repeat(2049),
      'not JSON': Buffer.from('{"v":1,').toString('base64url'),
      'a field added': Buffer.from(JSON.stringify({ ...decoded, extra: 1 })).toString('base64url'),
      'another binding': Buffer.from(JSON.stringify({ ...decoded, l: 'AAAAAAAAAAAAAAAA' })).toString('base64url'),
      'a control character in the position': Buffer.from(JSON.stringify({ ...decoded, p: 'a\u0000b' })).toString('base64url'),
    };
    for (const [what, value] of Object.entries(bad)) {
      const problem = expectProblem(await admin(`/api/gates?continuationToken=${encodeURIComponent(value)}`), 400, 'ValidationFailed');
      expect({ what, issues: problem.issues }).toEqual({ what, issues: [expect.objectContaining({ path: 'query.continuationToken' })] });
    }
    // A token serves only the list (and the filters) it was issued for.
    for (const other of ['/api/counters', '/api/sequences', '/api/jobs', '/api/streams', '/api/schedules', '/api/schedules?state=paused']) {
      const problem = expectProblem(
        await admin(`${other}${other.includes('?') ? '&' : '?'}continuationToken=${token}`),
        400,
        'ValidationFailed',
      );
      expect(problem.issues).toEqual([expect.objectContaining({ path: 'query.continuationToken' })]);
    }
    const jobs = await Promise.all(
      [1, 2].map(async (seed) => {
        const accepted = await requestJson<JobView>(host, 'POST', '/api/jobs', {
          body: { processor: 'billing', items: transactions(3, seed, unique('pb')) },
        });
        return settledJob(host, accepted.body.id);
      }),
    );
    const [a, b] = jobs as [JobView, JobView];
    const resultsToken = (await requestJson<{ continuationToken?: string }>(host, 'GET', `/api/jobs/${a.id}/results?maxPageSize=1`)).body
      .continuationToken;
    expect(resultsToken).toBeDefined();
    for (const path of [`/api/jobs/${b.id}/results`, `/api/jobs/${a.id}/failures`, `/api/jobs/${a.id}/results?status=succeeded`]) {
      const problem = expectProblem(
        await requestJson(host, 'GET', `${path}${path.includes('?') ? '&' : '?'}continuationToken=${resultsToken}`),
        400,
        'ValidationFailed',
      );
      expect({ path, issues: problem.issues }).toEqual({ path, issues: [expect.objectContaining({ path: 'query.continuationToken' })] });
    }

    const after = (await readAll<{ name: string }>(host, '/api/gates', { key: 'admin' })).filter(ours(prefix));
    expect(after).toEqual(before);
  });
});
