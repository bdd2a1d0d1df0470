/**
 * Every sequences endpoint through its RouteDefinition (validation, handler, problem+json), backed by
 * Azurite on tables of its own. Bad input must answer 400/413 and write nothing: each such test
 * reads the tables back.
 */
import { problemContentType } from '../../../shared/errors';
import type { RouteDefinition } from '../../../shared/http/route';
import { dammCheckDigit } from '../../../shared/sequences/damm';
import { defaultDefinition, maxSequenceValue } from '../../../shared/sequences/definition';
import { sequencesRoutes } from '../../../shared/sequences/routes';
import type { NextResult, SequenceService, SequenceView } from '../../../shared/sequences/service';
import { callRoute, routeNamed, type TestRequest } from '../../support/routeRequest';
import { sequenceHarness, type SequenceHarness } from '../../support/sequences';

interface Problem {
  status: number;
  code: string;
  detail: string;
  issues?: { path: string; message: string }[];
  differences?: { field: string; existing: unknown; requested: unknown }[];
}

interface Validation {
  valid: boolean;
  reason?: string;
  number?: number;
}

const badNames: [string, string][] = [
  ['a 64-character name', 'n'.repeat(64)],
  ['a 200-character name', 'x'.repeat(200)],
  ['a space', 'bad name'],
  ['a hash', 'a#b'],
  ['a slash', 'a/b'],
  ['a backslash', 'a\\b'],
  ['a question mark', 'a?b'],
  ['a quote', "o'rders"],
  ['a control character', 'a\u0001b'],
  ['a non-ASCII letter', 'ordérs'],
  ['an empty name', ''],
];

describe('sequences HTTP handlers on Azurite', () => {
  let h: SequenceHarness;
  let service: SequenceService;
  let routes: RouteDefinition[];
  const route = (name: string): RouteDefinition => routeNamed(routes, name);
  const put = (name: string, body?: unknown, extra: TestRequest = {}) =>
    callRoute<SequenceView & Problem>(route('sequencesConfigure'), { params: { name }, body, ...extra });
  const next = (name: string, body?: unknown, headers?: Record<string, string>) =>
    callRoute<NextResult & Problem>(route('sequencesNext'), { params: { name }, body, ...(headers ? { headers } : {}) });
  const get = (name: string) => callRoute<SequenceView & Problem>(route('sequencesGet'), { params: { name } });
  const validate = (name: string, formatted: string) =>
    callRoute<Validation & Problem>(route('sequencesValidate'), { params: { name, formatted } });

  beforeEach(async () => {
    h = sequenceHarness();
    service = h.service();
    routes = sequencesRoutes({ service: () => service });
    // Both tables exist from the start, so "nothing was written" is a read of an empty table.
    await h.table();
    await h.idempotency();
  });

  afterEach(async () => {
    await service.shutdown();
  });

  const expectProblem = (res: { status: number; headers: Record<string, string>; body: Problem }, status: number, code: string) => {
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toBe(problemContentType);
    expect(res.body.code).toBe(code);
  };

  describe('PUT /api/sequences/{name}', () => {
    it('creates a sequence with defaults filled in (201), then answers 200 to the same settings', async () => {
      const created = await put('orders', { prefix: 'ORD-', width: 7 });
      expect(created.status).toBe(201);
      expect(created.headers.location).toBe('/api/sequences/orders');
      expect(created.body).toEqual({
        sequence: 'orders',
        settings: { ...defaultDefinition, prefix: 'ORD-', width: 7 },
        highWaterMark: 1,
        instance: null,
      });
      expect((await put('orders', { prefix: 'ORD-', width: 7 })).status).toBe(200);
      expect((await put('orders', { prefix: 'ORD-' })).status).toBe(200);
      expect((await put('orders')).status).toBe(200);
      expect(await h.entities()).toHaveLength(1);
    });

    it('answers 409 naming the differing fields, and changes nothing', async () => {
      await put('orders', { prefix: 'ORD-', width: 7, blockSize: { min: 5, max: 50 } });
      const before = await h.entities();
      const res = await put('orders', { prefix: 'INV-', width: 7, blockSize: { max: 60 } });
      expectProblem(res, 409, 'Conflict');
      expect(res.body.differences).toEqual([
        { field: 'prefix', existing: 'ORD-', requested: 'INV-' },
        { field: 'blockSize.max', existing: 50, requested: 60 },
      ]);
      expect(await h.entities()).toEqual(before);
    });

    it.each([
      ['an illegal table-key character', 'a#b', {}],
      ['a slash', 'a/b', {}],
      ['a question mark', 'a?b', {}],
      ['a 64-character name', 'n'.repeat(64), {}],
      ['an unknown field', 'orders', { prefix: 'X', colour: 'blue' }],
      ['a width of 2.5', 'orders', { width: 2.5 }],
      ['a start that could pass MAX_SAFE_INTEGER', 'orders', { start: maxSequenceValue - 10 }],
      ['blockSize.min above blockSize.max', 'orders', { blockSize: { min: 10, max: 5 } }],
      ['malformed JSON', 'orders', '{"prefix": "ORD-",'],
      ['a JSON array', 'orders', '[1,2]'],
    ])('rejects %s with a 400 and writes nothing', async (_label, name, body) => {
      const res = await put(name, body);
      expectProblem(res, 400, 'ValidationFailed');
      expect(res.body.issues?.length).toBeGreaterThan(0);
      expect(await h.entities()).toEqual([]);
    });

    it('rejects an oversized body with a 413 and writes nothing, whatever Content-Length claims', async () => {
      const big = { prefix: 'ORD-', padding: 'x'.repeat(5000) };
      expectProblem(await put('orders', big), 413, 'PayloadTooLarge');
      expectProblem(await put('orders', big, { headers: { 'content-length': '10' } }), 413, 'PayloadTooLarge');
      expect(await h.entities()).toEqual([]);
    });
  });

  describe('POST /api/sequences/{name}/next', () => {
    beforeEach(async () => {
      await put('orders', { prefix: 'ORD-', width: 7, blockSize: { min: 10, max: 100 } });
    });

    it('returns one number by default, then consecutive numbers for a count', async () => {
      const one = await next('orders');
      expect(one.status).toBe(200);
      expect(one.body).toEqual({ sequence: 'orders', numbers: [1], formatted: [`ORD-0000001-${dammCheckDigit('0000001')}`] });
      const three = await next('orders', { count: 3 });
      expect(three.body.numbers).toEqual([2, 3, 4]);
      expect(three.body.formatted).toEqual([2, 3, 4].map((n) => `ORD-000000${n}-${dammCheckDigit(`000000${n}`)}`));
    });

    it('takes 1000 numbers in one call, spanning blocks', async () => {
      const res = await next('orders', { count: 1000 });
      expect(res.body.numbers).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
      expect(await h.highWaterMark('orders')).toBeGreaterThan(1000);
    });

    it('returns the same numbers for a retry with the same Idempotency-Key', async () => {
      const first = await next('orders', { count: 2 }, { 'Idempotency-Key': 'order-batch-17' });
      const retry = await next('orders', { count: 2 }, { 'Idempotency-Key': 'order-batch-17' });
      const other = await next('orders', { count: 2 }, { 'Idempotency-Key': 'order-batch-18' });
      expect(retry.body).toEqual(first.body);
      expect(other.body.numbers).toEqual([3, 4]);
      const misuse = await next('orders', { count: 5 }, { 'Idempotency-Key': 'order-batch-17' });
      expectProblem(misuse, 409, 'Conflict');
      expect(await h.idempotencyEntities()).toHaveLength(2);
    });

    it('answers 404 for an unknown sequence when auto-create is off, and creates nothing', async () => {
      const res = await next('missing');
      expectProblem(res, 404, 'NotFound');
      expect((await h.entities()).map((e) => e.partitionKey)).toEqual(['orders']);
    });

    it('creates an unknown sequence with the defaults on first use when auto-create is on', async () => {
      const auto = h.service({ autoCreate: true });
      const autoRoutes = sequencesRoutes({ service: () => auto });
      const res = await callRoute<NextResult>(routeNamed(autoRoutes, 'sequencesNext'), { params: { name: 'fresh' } });
      expect(res.status).toBe(200);
      expect(res.body.numbers).toEqual([defaultDefinition.start]);
      expect((await h.store.read('fresh'))?.definition).toEqual(defaultDefinition);
      await auto.shutdown();
    });

    it.each([
      ['count 0', 'orders', { count: 0 }],
      ['count 1001', 'orders', { count: 1001 }],
      ['count 2.5', 'orders', { count: 2.5 }],
      ['count "3"', 'orders', { count: '3' }],
      ['an unknown field', 'orders', { count: 1, sequence: 'x' }],
      ['malformed JSON', 'orders', '{"count": '],
      ['JSON null', 'orders', 'null'],
      ['an illegal table-key character', "o'rders", {}],
      ['a backslash', 'a\\b', {}],
      ['a 64-character name', 'n'.repeat(64), {}],
    ])('rejects %s with a 400 and writes nothing', async (_label, name, body) => {
      const before = await h.entities();
      const res = await next(name, body, { 'Idempotency-Key': 'k1' });
      expectProblem(res, 400, 'ValidationFailed');
      expect(await h.entities()).toEqual(before);
      expect(await h.idempotencyEntities()).toEqual([]);
    });

    it('rejects an invalid Idempotency-Key with a 400 and writes nothing', async () => {
      const before = await h.entities();
      const res = await next('orders', { count: 1 }, { 'Idempotency-Key': 'has spaces in it' });
      expectProblem(res, 400, 'ValidationFailed');
      expect(res.body.issues?.[0]?.path).toBe('headers.Idempotency-Key');
      expect(await h.entities()).toEqual(before);
      expect(await h.idempotencyEntities()).toEqual([]);
    });

    it('rejects an oversized body with a 413 and writes nothing', async () => {
      const before = await h.entities();
      const res = await next('orders', { count: 1, padding: 'x'.repeat(2000) });
      expectProblem(res, 413, 'PayloadTooLarge');
      expect(await h.entities()).toEqual(before);
    });
  });

  describe('GET /api/sequences/{name}', () => {
    it("shows settings, the high-water mark and this instance's block statistics", async () => {
      await put('orders', { blockSize: { min: 10, max: 100 } });
      const before = await get('orders');
      expect(before.status).toBe(200);
      expect(before.body).toMatchObject({ sequence: 'orders', highWaterMark: 1, instance: null });
      await next('orders', { count: 3 });
      const after = await get('orders');
      expect(after.body.highWaterMark).toBe(11);
      expect(after.body.instance).toMatchObject({ blockSize: 10, remaining: 7, issued: 3, refills: 1, retries412: 0, closed: false });
    });

    it('answers 404 for an unknown sequence', async () => {
      expectProblem(await get('missing'), 404, 'NotFound');
      expect(await h.entities()).toEqual([]);
    });

    it.each(badNames)('rejects a name with %s with a 400 naming params.name, and writes nothing', async (_label, name) => {
      await put('orders');
      const before = await h.entities();
      const res = await get(name);
      expectProblem(res, 400, 'ValidationFailed');
      // An empty name breaks both the length and the character rule: every issue is about the name.
      expect(new Set(res.body.issues?.map((i) => i.path))).toEqual(new Set(['params.name']));
      expect(await h.entities()).toEqual(before);
      expect(await h.idempotencyEntities()).toEqual([]);
    });

    it('reports corrupt stored state as CorruptState without naming its table keys, and leaves it alone', async () => {
      await put('orders');
      const table = await h.table();
      await table.updateEntity({ partitionKey: 'orders', rowKey: 'sequence', next: 'twelve' }, 'Merge');
      const before = await h.entities();
      for (const res of [await get('orders'), await next('orders'), await validate('orders', 'x')]) {
        expectProblem(res, 500, 'CorruptState');
        // The sequence's name is its partition key: a 500 names no stored keys (the log does); only
        // `instance`, the caller's own request path, holds it.
        const { instance, ...rest } = res.body as unknown as Record<string, unknown>;
        expect(String(instance)).toMatch(/^\/api\/sequences\/orders/);
        expect(JSON.stringify(rest)).not.toContain('orders');
        expect(res.body.detail).toBe('Stored state cannot be interpreted; it was left unchanged. The log has the details.');
      }
      expect(await h.entities()).toEqual(before);
    });
  });

  describe('GET /api/sequences/{name}/validate/{formatted}', () => {
    beforeEach(async () => {
      await put('orders', { prefix: 'ORD-', width: 7 });
    });

    it('accepts a number the sequence issued', async () => {
      const issued = await next('orders', { count: 1 });
      const res = await validate('orders', issued.body.formatted[0] ?? '');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ valid: true, number: issued.body.numbers[0] });
    });

    it('answers 200 valid:false with a reason for a typo or a malformed number', async () => {
      const check = dammCheckDigit('0012345');
      const typo = await validate('orders', `ORD-0012345-${(check + 1) % 10}`);
      expect(typo.status).toBe(200);
      expect(typo.body).toEqual({ valid: false, reason: 'the check digit is wrong' });
      for (const text of ['hello', '../etc', 'ORD-', 'ünïcode', 'ORD-12-3']) {
        const res = await validate('orders', text);
        expect(res.status).toBe(200);
        expect(res.body.valid).toBe(false);
        expect(res.body.reason).toEqual(expect.any(String));
      }
    });

    it('refuses unsafe input with a 400, and answers 404 for an unknown sequence', async () => {
      expectProblem(await validate('orders', 'ORD-\u0000-1'), 400, 'ValidationFailed');
      expectProblem(await validate('orders', '9'.repeat(101)), 400, 'ValidationFailed');
      expectProblem(await validate('missing', 'ORD-0012345-1'), 404, 'NotFound');
    });

    it.each(badNames)('rejects a name with %s with a 400 naming params.name, and writes nothing', async (_label, name) => {
      const before = await h.entities();
      const res = await validate(name, `ORD-0012345-${dammCheckDigit('0012345')}`);
      expectProblem(res, 400, 'ValidationFailed');
      expect(new Set(res.body.issues?.map((i) => i.path))).toEqual(new Set(['params.name']));
      expect(await h.entities()).toEqual(before);
      expect(await h.idempotencyEntities()).toEqual([]);
    });
  });
});
