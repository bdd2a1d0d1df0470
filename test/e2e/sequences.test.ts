/**
 * The sequences API over HTTP only, against a devhost child process (or E2E_BASE_URL, e.g.
 * `func start`). Numbers must be unique under concurrent clients, formatted numbers must validate,
 * and bad input must get a 400 problem+json that changes nothing.
 */
import { randomBytes } from 'node:crypto';

import { TableClient } from '@azure/data-tables';

import { type E2eHost, ownHostTest, startE2eHost, storageOf } from './support/harness';
import { sharedE2eHost } from './support/sharedHost';
import { expectProblem, requestJson } from './support/http';
import { unique } from './support/names';

interface NextResult {
  sequence: string;
  numbers: number[];
  formatted: string[];
}

interface SequenceView {
  sequence: string;
  settings: { start: number; prefix: string; width: number; checkDigit: boolean };
  highWaterMark: number;
  instance: { issued: number } | null;
}

const create = (host: E2eHost, name: string, settings: unknown = {}) =>
  requestJson<SequenceView>(host, 'PUT', `/api/sequences/${name}`, { body: settings, key: 'admin' });

describe('sequences over HTTP', () => {
  let host: E2eHost;

  beforeAll(async () => {
    host = await sharedE2eHost();
  });
  afterAll(async () => {
    await host.dispose();
  });

  const create = (name: string, settings: unknown = {}) =>
    requestJson<SequenceView>(host, 'PUT', `/api/sequences/${name}`, { body: settings, key: 'admin' });
  const next = (name: string, body?: unknown, headers?: Record<string, string>) =>
    requestJson<NextResult>(host, 'POST', `/api/sequences/${name}/next`, {
      ...(body === undefined ? {} : { body }),
      ...(headers ? { headers } : {}),
    });

  test('create answers 201, the same settings again 200, different settings 409', async () => {
    const name = unique('cfg');
    const settings = { prefix: 'ORD-', width: 7, checkDigit: true, start: 1000 };
    const created = await create(name, settings);
    expect(created.status).toBe(201);
    expect(created.body.settings).toMatchObject(settings);
    expect((await create(name, settings)).status).toBe(200);
    expect((await create(name, { prefix: 'ORD-' })).status).toBe(200);
    expectProblem(await create(name, { prefix: 'INV-' }), 409, 'Conflict');
    const view = await requestJson<SequenceView>(host, 'GET', `/api/sequences/${name}`);
    expect(view.status).toBe(200);
    expect(view.body.settings.prefix).toBe('ORD-');
    expect(view.body.highWaterMark).toBe(1000);
  });

  test('numbers are unique across 8 concurrent clients × 500 calls and increase per client', async () => {
    const name = unique('load');
    expect((await create(name, { prefix: 'L', width: 6 })).status).toBe(201);
    const perClient = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const mine: number[] = [];
        for (let i = 0; i < 500; i++) {
          const res = await next(name);
          if (res.status !== 200) throw new Error(`call ${i} answered ${res.status}: ${JSON.stringify(res.body)}`);
          expect(res.body.numbers).toHaveLength(1);
          mine.push(res.body.numbers[0] as number);
        }
        return mine;
      }),
    );
    const all = perClient.flat();
    expect(all).toHaveLength(4000);
    expect(new Set(all).size).toBe(4000);
    for (const mine of perClient) for (let i = 1; i < mine.length; i++) expect(mine[i]).toBeGreaterThan(mine[i - 1] as number);
    const view = await requestJson<SequenceView>(host, 'GET', `/api/sequences/${name}`);
    expect(view.body.highWaterMark).toBeGreaterThan(Math.max(...all));
    if (!host.external) expect(view.body.instance?.issued).toBe(4000);
  });

  test('a batch of 100 is consecutive, and every formatted number validates', async () => {
    const name = unique('fmt');
    await create(name, { prefix: 'ORD-', width: 7, checkDigit: true });
    const res = await next(name, { count: 100 });
    expect(res.status).toBe(200);
    expect(res.body.sequence).toBe(name);
    const { numbers, formatted } = res.body;
    expect(numbers).toHaveLength(100);
    numbers.forEach((n, i) => i > 0 && expect(n).toBe((numbers[i - 1] as number) + 1));
    for (const [i, text] of formatted.entries()) {
      expect(text).toMatch(/^ORD-\d{7}-\d$/);
      if (i % 10 !== 0) continue;
      const check = await requestJson<{ valid: boolean; number?: number }>(
        host,
        'GET',
        `/api/sequences/${name}/validate/${encodeURIComponent(text)}`,
      );
      expect(check.body).toEqual({ valid: true, number: numbers[i] });
    }
    // One wrong digit (not in the prefix) must be caught by the check digit.
    const sample = formatted[0] as string;
    const at = 'ORD-'.length + 6;
    const wrong = `${sample.slice(0, at)}${(Number(sample[at]) + 1) % 10}${sample.slice(at + 1)}`;
    const bad = await requestJson<{ valid: boolean; reason?: string }>(
      host,
      'GET',
      `/api/sequences/${name}/validate/${encodeURIComponent(wrong)}`,
    );
    expect(bad.status).toBe(200);
    expect(bad.body.valid).toBe(false);
    expect(bad.body.reason).toMatch(/check digit/);
  });

  test('an Idempotency-Key returns the same numbers on a retry', async () => {
    const name = unique('idem');
    await create(name);
    const key = randomBytes(8).toString('hex');
    const first = await next(name, { count: 3 }, { 'Idempotency-Key': key });
    const retry = await next(name, { count: 3 }, { 'Idempotency-Key': key });
    expect(first.status).toBe(200);
    expect(retry.body.numbers).toEqual(first.body.numbers);
    const fresh = await next(name, { count: 3 });
    expect(fresh.body.numbers.some((n) => first.body.numbers.includes(n))).toBe(false);
  });

  test('an unknown sequence is a 404 problem', async () => {
    expectProblem(await next(unique('missing')), 404, 'NotFound');
    expectProblem(await requestJson(host, 'GET', `/api/sequences/${unique('missing')}`), 404, 'NotFound');
  });

  test('bad input gets 400 problem+json and changes nothing', async () => {
    const name = unique('bad');
    await create(name);
    const before = await requestJson<SequenceView>(host, 'GET', `/api/sequences/${name}`);
    for (const body of [{ count: 0 }, { count: 1001 }, { count: 'x' }, { count: 1.5 }, { amount: 1 }]) {
      const problem = expectProblem(await next(name, body), 400, 'ValidationFailed');
      expect(problem.issues?.length).toBeGreaterThan(0);
    }
    expectProblem(await next(name, '{"count":'), 400, 'ValidationFailed');
    expectProblem(await next(name, undefined, { 'Idempotency-Key': 'x'.repeat(300) }), 400, 'ValidationFailed');
    const after = await requestJson<SequenceView>(host, 'GET', `/api/sequences/${name}`);
    expect(after.body.highWaterMark).toBe(before.body.highWaterMark);
    expect(after.body.instance?.issued ?? 0).toBe(before.body.instance?.issued ?? 0);

    const badName = encodeURIComponent('bad name!');
    expectProblem(await next(badName), 400, 'ValidationFailed');
    const neverCreated = unique('never');
    expectProblem(await create(neverCreated, { width: 0 }), 400, 'ValidationFailed');
    expectProblem(await create(neverCreated, { prefix: 'has space' }), 400, 'ValidationFailed');
    expectProblem(await create(neverCreated, { blockSize: { min: 10, max: 5 } }), 400, 'ValidationFailed');
    expectProblem(await requestJson(host, 'GET', `/api/sequences/${neverCreated}`), 404, 'NotFound');
  });
});

describe('sequences with keys enforced', () => {
  let host: E2eHost;

  beforeAll(async () => {
    host = await sharedE2eHost();
  });
  afterAll(async () => {
    await host.dispose();
  });

  test('admin endpoints need the admin key, client endpoints a function key', async () => {
    const name = unique('keys');
    expect((await requestJson(host, 'PUT', `/api/sequences/${name}`, { body: {}, key: 'none' })).status).toBe(401);
    expect((await requestJson(host, 'PUT', `/api/sequences/${name}`, { body: {}, key: 'function' })).status).toBe(401);
    expect((await requestJson(host, 'PUT', `/api/sequences/${name}`, { body: {}, key: 'admin' })).status).toBe(201);
    expect((await requestJson(host, 'POST', `/api/sequences/${name}/next`, { key: 'none' })).status).toBe(401);
    expect((await requestJson(host, 'POST', `/api/sequences/${name}/next`, { key: 'function' })).status).toBe(200);
    expect((await requestJson(host, 'POST', `/api/sequences/${name}/next`, { key: 'admin' })).status).toBe(200);
  });
});

describe('sequences across a graceful restart', () => {
  let host: E2eHost;

  beforeAll(async () => {
    host = await startE2eHost();
  });
  afterAll(async () => {
    await host.dispose();
  });

  /** The high-water mark as stored (the sequence's row in the `sequences` table), not as the app reports it. */
  const storedNext = async (name: string): Promise<number> => {
    const table = TableClient.fromConnectionString(storageOf(host), 'sequences', {
      allowInsecureConnection: true,
    });
    const entity = await table.getEntity<{ next: unknown }>(name, 'sequence');
    return Number(entity.next);
  };

  ownHostTest(
    'stopping the host gracefully returns the unused tail of the block, and numbering resumes right after the last number issued',
    async () => {
      const name = unique('tail');
      // A fixed block of 50: the first refill reserves 100–149, and 3 numbers leave 47 unused (no prefetch yet).
      expect((await create(host, name, { start: 100, blockSize: { min: 50, max: 50 } })).status).toBe(201);
      const taken = await requestJson<NextResult>(host, 'POST', `/api/sequences/${name}/next`, { body: { count: 3 } });
      expect(taken.body.numbers).toEqual([100, 101, 102]);
      expect(await storedNext(name)).toBe(150);

      await host.restart(); // SIGTERM: the host runs its appTerminate hooks before exiting

      expect(await storedNext(name)).toBe(103);
      // The real host stops relaying its worker's output once it is shutting down (4.1037: the block came
      // back, the hook's log line never reached the host's output), so only the devhost's is checked.
      if (host.kind === 'devhost') expect(host.output()).toMatch(/sequence\.tail_returned/);
      const after = await requestJson<NextResult>(host, 'POST', `/api/sequences/${name}/next`, { body: { count: 2 } });
      expect(after.body.numbers).toEqual([103, 104]);
    },
  );

  ownHostTest('a host that is killed returns nothing: the rest of its block is a gap', async () => {
    const name = unique('kill');
    expect((await create(host, name, { start: 100, blockSize: { min: 50, max: 50 } })).status).toBe(201);
    const taken = await requestJson<NextResult>(host, 'POST', `/api/sequences/${name}/next`, { body: { count: 3 } });
    expect(taken.body.numbers).toEqual([100, 101, 102]);

    await host.restart({ kill: true });

    expect(await storedNext(name)).toBe(150);
    const after = await requestJson<NextResult>(host, 'POST', `/api/sequences/${name}/next`);
    expect(after.body.numbers).toEqual([150]);
  });
});
