/**
 * The counters API over HTTP only, against a devhost child process whose rollup timer fires every
 * second (or E2E_BASE_URL, e.g. `func start`). Increments show in reads at once, the timer folds
 * them into the summary without changing the value, an Idempotency-Key counts once, and bad input
 * gets a 400 problem+json that changes nothing.
 */
import { ownHostTest, type E2eHost, startE2eHost } from './support/harness';
import { expectProblem, requestJson } from './support/http';
import { unique } from './support/names';
import { until as waitUntil } from './support/wait';

interface CounterValue {
  name: string;
  mode: string;
  value: number;
  watermark: string | null;
  pendingHits: number;
  consistent: boolean;
}

describe('counters over HTTP', () => {
  let host: E2eHost;

  beforeAll(async () => {
    host = await startE2eHost({ env: { TALLYHO_COUNTERS_ROLLUP_SCHEDULE: '*/1 * * * * *' } });
  });
  afterAll(async () => {
    await host.dispose();
  });

  const configure = (name: string, settings: unknown) =>
    requestJson(host, 'PUT', `/api/counters/${name}`, { body: settings, key: 'admin' });
  const increment = (name: string, body?: unknown, headers?: Record<string, string>) =>
    requestJson<{ name: string; by: number }>(host, 'POST', `/api/counters/${name}/increment`, {
      ...(body === undefined ? {} : { body }),
      ...(headers ? { headers } : {}),
    });
  const read = (name: string, consistent = false) =>
    requestJson<CounterValue>(host, 'GET', `/api/counters/${name}${consistent ? '?consistent=true' : ''}`);

  const until = async (what: string, check: () => Promise<boolean>): Promise<void> => {
    await waitUntil(what, async () => ((await check()) ? true : undefined), undefined, 250);
  };

  ownHostTest('hits are counted at once and the timer rollup folds them into the summary without changing the value', async () => {
    const name = unique('views');
    expect((await configure(name, { mode: 'hits', partitions: 4, safetyWindowSeconds: 1 })).status).toBe(201);
    const amounts = Array.from({ length: 60 }, (_, i) => (i % 3) + 1);
    const answers = await Promise.all(amounts.map((by) => increment(name, { by })));
    expect(answers.map((a) => a.status)).toEqual(amounts.map(() => 202));
    const total = amounts.reduce((s, by) => s + by, 0);

    const fresh = await read(name);
    expect(fresh.status).toBe(200);
    expect(fresh.body.value).toBe(total);

    let folded: CounterValue | undefined;
    await until('the rollup to fold every hit', async () => {
      folded = (await read(name)).body;
      return folded.pendingHits === 0 && folded.watermark !== null;
    });
    expect(folded?.value).toBe(total);
    expect((await read(name, true)).body).toMatchObject({ value: total, pendingHits: 0, consistent: true });

    // Later hits are pending until the next rollups, and the value keeps counting them.
    await increment(name, { by: -4 });
    expect((await read(name)).body).toMatchObject({ value: total - 4, pendingHits: 1 });
    await until('the adjustment to be folded', async () => (await read(name)).body.pendingHits === 0);
    expect((await read(name)).body.value).toBe(total - 4);
  });

  test('sharded counters sum their shards; an Idempotency-Key counts once', async () => {
    const name = unique('likes');
    expect((await configure(name, { mode: 'sharded', partitions: 3 })).status).toBe(201);
    await Promise.all(Array.from({ length: 30 }, () => increment(name)));
    const first = await increment(name, { by: 10 }, { 'Idempotency-Key': 'like-once' });
    const retry = await increment(name, { by: 10 }, { 'Idempotency-Key': 'like-once' });
    expect([first.status, retry.status]).toEqual([202, 202]);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect((await read(name)).body).toMatchObject({ value: 40, mode: 'sharded', pendingHits: 0 });
    expectProblem(await increment(name, { by: 11 }, { 'Idempotency-Key': 'like-once' }), 409, 'Conflict');
  });

  test('reconfiguring a counter with data: the same settings 200, a new mode 409', async () => {
    const name = unique('cfg');
    const settings = { mode: 'hits', partitions: 2, safetyWindowSeconds: 30 };
    expect((await configure(name, settings)).status).toBe(201);
    await increment(name);
    expect((await configure(name, settings)).status).toBe(200);
    expectProblem(await configure(name, { ...settings, mode: 'sharded' }), 409, 'Conflict');
    expect((await configure(name, { ...settings, safetyWindowSeconds: 5 })).status).toBe(200);
  });

  test('bad input is a 400 problem+json and changes nothing; an unknown counter is a 404', async () => {
    const name = unique('strict');
    await configure(name, { partitions: 1 });
    await increment(name, { by: 5 });
    for (const body of [{ by: 2.5 }, { by: '3' }, { by: 0 }, { by: 10_000_001 }, { by: 1, extra: true }, '{"by":']) {
      const problem = expectProblem(await increment(name, body), 400, 'ValidationFailed');
      expect(problem.issues?.length).toBeGreaterThan(0);
    }
    expectProblem(await increment(name, { by: 1 }, { 'Idempotency-Key': ' ' }), 400, 'ValidationFailed');
    expectProblem(await requestJson(host, 'POST', `/api/counters/${'x'.repeat(64)}/increment`), 400, 'ValidationFailed');
    expectProblem(await configure(unique('bad'), { mode: 'turbo' }), 400, 'ValidationFailed');
    expectProblem(await requestJson(host, 'GET', `/api/counters/${name}?consistent=maybe`), 400, 'ValidationFailed');
    expect((await read(name, true)).body).toMatchObject({ value: 5, pendingHits: 1 });
    expectProblem(await increment(unique('ghost')), 404, 'NotFound');
  });
});
