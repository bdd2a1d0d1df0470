import { validateFormatted as serverValidate } from '../../../../shared/sequences/format';
import { dammCheckDigit } from '../../src/damm';
import { Sequence } from '../../src/sequence';
import { settle } from '../support/fakeClock';
import { fakeTransport } from '../support/fakeTransport';
import { type Handler, json } from '../support/fakeFetch';

/** A server that issues consecutive numbers and answers a repeated Idempotency-Key with the first numbers. */
function numberServer(options: { loseFirstResponse?: boolean; hold?: () => Promise<void> } = {}) {
  let next = 1;
  const byKey = new Map<string, number[]>();
  let lost = false;
  const handler: Handler = async (request) => {
    if (request.method === 'GET') {
      return json(200, {
        sequence: 'orders',
        settings: { start: 1, prefix: 'ORD-', width: 7, checkDigit: true },
        highWaterMark: next,
        instance: null,
      });
    }
    await options.hold?.();
    const key = request.headers['idempotency-key'] ?? '';
    const count = (request.body as { count: number }).count;
    let numbers = byKey.get(key);
    if (numbers === undefined) {
      numbers = Array.from({ length: count }, (_, i) => next + i);
      next += count;
      byKey.set(key, numbers);
    }
    if (options.loseFirstResponse === true && !lost) {
      lost = true;
      throw new TypeError('connection reset after the server answered');
    }
    return json(200, { sequence: 'orders', numbers, formatted: numbers.map((n) => `N${n}`) });
  };
  return { handler, issuedUpTo: () => next - 1 };
}

function sequence(handler: Handler, options: ConstructorParameters<typeof Sequence>[2] = {}) {
  const { transport, clock, requests } = fakeTransport(handler);
  return { seq: new Sequence(transport, 'orders', options), clock, requests };
}

const counts = (requests: { body: unknown }[]) => requests.map((r) => (r.body as { count: number }).count);

describe('Sequence', () => {
  test('a next() aborted while the reservation is out rejects at once; the reservation serves the others', async () => {
    let letGo: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (letGo = resolve));
    const server = numberServer({ hold: () => gate });
    const { seq, requests } = sequence(server.handler, { initialBlock: 10, prefetchAt: 0 });
    const controller = new AbortController();
    const aborted = seq.next({ abortSignal: controller.signal });
    const other = seq.next();
    await settle();
    controller.abort();
    await expect(aborted).rejects.toMatchObject({ name: 'AbortError' });
    letGo();
    await expect(other).resolves.toBe('N1');
    await expect(seq.next(2)).resolves.toEqual(['N2', 'N3']);
    expect(requests).toHaveLength(1);
  });

  test('one reservation of count N serves N numbers without further requests', async () => {
    const server = numberServer();
    const { seq, requests } = sequence(server.handler, { initialBlock: 50, prefetchAt: 0 });
    const got: string[] = [];
    for (let i = 0; i < 50; i++) got.push(await seq.next());
    expect(got).toEqual(Array.from({ length: 50 }, (_, i) => `N${i + 1}`));
    expect(requests).toHaveLength(1);
    expect(requests[0]?.body).toEqual({ count: 50 });
    expect(requests[0]?.headers['content-type']).toBe('application/json');
  });

  test('the next block is reserved when 10% of the current one is left, not before', async () => {
    const { seq, requests } = sequence(numberServer().handler, { initialBlock: 100 });
    await seq.next(89);
    await settle();
    expect(requests).toHaveLength(1);
    await seq.next();
    await settle();
    expect(requests).toHaveLength(2);
    expect(seq.stats().remaining).toBeGreaterThan(100);
  });

  test('concurrent callers share one reservation in flight and get distinct numbers', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { seq, requests } = sequence(numberServer({ hold: () => gate }).handler, { initialBlock: 10, maxBlock: 10 });
    const callers = Array.from({ length: 16 }, () => seq.next());
    await settle();
    expect(requests).toHaveLength(1);
    release();
    const numbers = await Promise.all(callers);
    expect(new Set(numbers).size).toBe(16);
    expect(requests).toHaveLength(2);
  });

  test('a reservation retried after a lost response reuses its Idempotency-Key and gets the same numbers: no gap', async () => {
    const server = numberServer({ loseFirstResponse: true });
    const { seq, clock, requests } = sequence(server.handler, { initialBlock: 5, prefetchAt: 0 });
    const first = seq.next(5);
    await clock.advance(1000);
    expect(await first).toEqual(['N1', 'N2', 'N3', 'N4', 'N5']);
    expect(requests).toHaveLength(2);
    expect(requests[1]?.headers['idempotency-key']).toBe(requests[0]?.headers['idempotency-key']);
    expect(server.issuedUpTo()).toBe(5);
    // The next reservation is a new request with a new key.
    await seq.next();
    expect(requests[2]?.headers['idempotency-key']).not.toBe(requests[0]?.headers['idempotency-key']);
  });

  test('the block size doubles while blocks run out fast and halves when they last long, within bounds', async () => {
    const { seq, clock, requests } = sequence(numberServer().handler, {
      initialBlock: 10,
      maxBlock: 40,
      refillTargetMs: 1000,
      prefetchAt: 0,
    });
    await seq.next(10);
    await seq.next(10);
    await seq.next(20);
    await seq.next(40);
    await seq.next(40);
    expect(counts(requests)).toEqual([10, 20, 40, 40, 40]);
    await clock.advance(5000);
    await seq.next(51);
    expect(counts(requests).slice(5)).toEqual([20, 40]);
  });

  test("blocks aim at one reservation per 10 s by default (the .NET client's RefillTarget): a block that lasted 6 s keeps its size", async () => {
    const { seq, clock, requests } = sequence(numberServer().handler, { initialBlock: 10, prefetchAt: 0 });
    await seq.next(10);
    await clock.advance(6000);
    await seq.next(10);
    await clock.advance(21_000);
    await seq.next(10);
    expect(counts(requests).slice(0, 3)).toEqual([10, 10, 5]);
  });

  test('validate() checks locally with the format read once from the server', async () => {
    const { seq, requests } = sequence(numberServer().handler);
    const digits = '0012345';
    const good = `ORD-${digits}-${dammCheckDigit(digits)}`;
    await expect(seq.validate(good)).resolves.toEqual({ valid: true, number: 12345 });
    await expect(seq.validate('ORD-0012354-' + String(dammCheckDigit(digits)))).resolves.toMatchObject({ valid: false });
    expect(requests.filter((r) => r.method === 'GET')).toHaveLength(1);
  });

  test("the local check agrees with the server's on every single-digit error and adjacent swap", async () => {
    const { seq } = sequence(numberServer().handler);
    const settings = { start: 1, prefix: 'ORD-', width: 7, checkDigit: true };
    const digits = '0012345';
    const canonical = `ORD-${digits}-${dammCheckDigit(digits)}`;
    const variants = [canonical, 'ord-0012345-0', 'ORD-12345-1', 'ORD-00123456', 'X-0012345-1'];
    for (let i = 0; i < canonical.length; i++) {
      for (const c of '0123456789') variants.push(canonical.slice(0, i) + c + canonical.slice(i + 1));
      variants.push(canonical.slice(0, i) + (canonical[i + 1] ?? '') + (canonical[i] ?? '') + canonical.slice(i + 2));
    }
    for (const text of variants) expect([text, await seq.validate(text)]).toEqual([text, serverValidate(settings, text)]);
  });
});
