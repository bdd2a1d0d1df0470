/**
 * The client against the host of the run — the devhost, or the real Functions host in the
 * client-e2e-real run (HTTP only, keys enforced, so every call proves its key went by
 * header): numbers from reserved blocks stay unique across concurrent callers and client instances;
 * gate waits started before and after a release both return, also when the event stream is cut
 * mid-wait; coalesced increments read back exactly, also through lost responses; cached gate
 * checks see the service's state and answer the default when it is unreachable; a job runs to completion through its
 * iterators; a stream append whose answer was lost is retried without writing a line twice.
 */
import { TallyhoClient } from '../../src/client';
import { type E2eHost, hostLabel, startE2eHost } from '../../../../test/e2e/support/harness';
import { unique } from '../../../../test/e2e/support/names';
import { readLog } from '../../../../test/e2e/support/streams';
import { transactions } from '../../../../test/support/billing';
import { until as untilCondition } from '../../../../test/support/waits';
import { type CutProxy, startCutProxy } from '../support/cutProxy';
import { queuesPolledPromptly } from '../../../../test/e2e/support/jobs';

describe(`@tallyho/client against the ${hostLabel()}`, () => {
  let host: E2eHost;
  let proxy: CutProxy;

  const client = (baseUrl = host.url('/api'), extra: Partial<ConstructorParameters<typeof TallyhoClient>[0]> = {}) =>
    new TallyhoClient({
      baseUrl,
      ...(host.keys.function === undefined ? {} : { functionKey: host.keys.function }),
      ...(host.keys.admin === undefined ? {} : { adminKey: host.keys.admin }),
      ...extra,
    });

  beforeAll(async () => {
    host = await startE2eHost({
      env: {
        TALLYHO_GATES_WATCH_INTERVAL_MS: '250',
        TALLYHO_GATES_HEARTBEAT_SECONDS: '1',
        TALLYHO_STREAMS_FLUSH_INTERVAL_MS: '200',
        TALLYHO_JOBS_QUEUE_PREFIX: unique('cj'),
        ...queuesPolledPromptly,
      },
    });
    proxy = await startCutProxy(host.url('/api'));
  });
  afterAll(async () => {
    await proxy?.close();
    await host?.dispose();
  });

  test('16 concurrent next() callers × 2 client instances × 5,000 numbers: no duplicates, few requests', async () => {
    const name = unique('orders');
    const admin = client();
    await admin.sequences.configure(name, { prefix: 'E2E-', width: 7, checkDigit: true, blockSize: { min: 100, max: 10_000 } });
    const instances = [client(), client()];
    const all = await Promise.all(
      instances.flatMap((c) =>
        Array.from({ length: 16 }, async () => {
          const sequence = c.sequence(name, { initialBlock: 1000 });
          const mine: string[] = [];
          for (let i = 0; i < 5000; i++) mine.push(await sequence.next());
          return mine;
        }),
      ),
    );
    const numbers = all.flat();
    expect(numbers).toHaveLength(2 * 16 * 5000);
    expect(new Set(numbers).size).toBe(numbers.length);
    const sequence = instances[0]!.sequence(name);
    await expect(sequence.validate(numbers[0]!)).resolves.toMatchObject({ valid: true });
    // Block reservation: one request per ~1,000 numbers, not one per number.
    const reservations = instances.reduce((n, c) => n + c.sequence(name).stats().reservations, 0);
    expect(reservations).toBeLessThanOrEqual(2 * (80 + 2));
  });

  test('a wait() started before the release and one started after it both return', async () => {
    const name = unique('launch');
    const gate = client(proxy.baseUrl).gate(name);
    await gate.create({ by: 'e2e' });
    const early = gate.wait({ timeout: 30_000 });
    // Started before the release: it has read the gate (not released) and follows its event stream.
    await until(() => proxy.seen.some((s) => s.path.includes(`/gates/${name}/events`)));
    await client().gate(name).release({ by: 'e2e', note: 'go' });
    await expect(early).resolves.toMatchObject({ state: 'released', releasedBy: 'e2e' });
    await expect(gate.wait({ timeout: 5_000 })).resolves.toMatchObject({ state: 'released', releaseNote: 'go' });
  });

  test('an event stream cut mid-wait reconnects and still sees the release', async () => {
    const name = unique('cut');
    let cuts = 0;
    proxy.setRule((_method, path) => (path.includes(`/gates/${name}/events`) && cuts++ < 2 ? 'cutMidStream' : 'forward'));
    const c = client(proxy.baseUrl, { random: () => 0 });
    const gate = c.gate(name, { reconnect: { baseMs: 200, capMs: 1000 } });
    await client().gate(name).create();
    const waiting = gate.wait({ timeout: 30_000 });
    // This gate's third stream is open (the count once took other tests' streams: CI, 2026-11-29): the
    // release is then seen on it, not only by the read a reconnect makes first.
    await until(() => cuts >= 2 && proxy.seen.filter((s) => s.path.includes(`/gates/${name}/events`)).length >= 3);
    await client().gate(name).release({ by: 'e2e' });
    await expect(waiting).resolves.toMatchObject({ state: 'released' });
    const streams = proxy.seen.filter((s) => s.path.includes(`/gates/${name}/events`));
    expect(streams.map((s) => s.action).slice(0, 3)).toEqual(['cutMidStream', 'cutMidStream', 'forward']);
  });

  test('10,000 coalesced increments read back exactly', async () => {
    const name = unique('hits');
    const c = client();
    await c.counters.configure(name, { mode: 'hits', partitions: 4 });
    await Promise.all(Array.from({ length: 10_000 }, () => c.increment(name)));
    await c.close();
    const value = await c.counters.get(name, { consistent: true });
    expect(value.value).toBe(10_000);
    expect(c.counters.stats()).toMatchObject({ increments: 10_000 });
    expect(c.counters.stats().requests).toBeLessThan(100);
  });

  test('increments through lost responses, four requests in flight, read back exactly', async () => {
    const name = unique('lossy');
    let posts = 0;
    proxy.setRule((method, path) =>
      method === 'POST' && path.includes(`/counters/${name}/increment`) && posts++ % 3 === 0 ? 'loseResponse' : 'forward',
    );
    const c = client(proxy.baseUrl, { retry: { baseDelayMs: 20, maxDelayMs: 200 } });
    await client().counters.configure(name, { mode: 'hits', partitions: 4 });
    for (let round = 0; round < 20; round++) await Promise.all(Array.from({ length: 50 }, (_, i) => c.increment(name, (i % 3) + 1)));
    await c.close();
    proxy.setRule(() => 'forward');
    const value = await client().counters.get(name, { consistent: true });
    expect(value.value).toBe(20 * (17 * 1 + 17 * 2 + 16 * 3));
    expect(proxy.seen.filter((r) => r.path.includes(`/counters/${name}/increment`) && r.action === 'loseResponse').length).toBeGreaterThan(
      5,
    );
  });

  test('isReleased answers from the service, then from its cache; an unreachable service answers the default', async () => {
    const name = unique('flag');
    const fallbacks: string[] = [];
    const c = client(undefined, { releases: { cacheMs: 60_000, onFallback: (f) => fallbacks.push(f.source) } });
    await client().gate(name).create();
    await expect(c.isReleased(name, { default: true })).resolves.toBe(false);
    await client().gate(name).release({ by: 'e2e' });
    await expect(c.isReleased(name, { default: true })).resolves.toBe(false); // cached for a minute
    c.releases.invalidate(name);
    await expect(c.isReleased(name, { default: false })).resolves.toBe(true);
    await expect(c.isReleased(unique('missing'), { default: true })).resolves.toBe(true);
    const down = client('http://127.0.0.1:9/api', { releases: { timeoutMs: 2000, onFallback: (f) => fallbacks.push(f.source) } });
    await expect(down.isReleased(name, { default: true })).resolves.toBe(true);
    expect(fallbacks).toEqual(['default', 'default']);
  });

  test('a job submitted and followed to completion; results and failures page through', async () => {
    const c = client();
    const items = transactions(60, 7, unique('tx'));
    const job = await c.jobs.submit('billing', items);
    const states: string[] = [];
    for await (const view of job.progress({ intervalMs: 250 })) states.push(view.state);
    expect(states.at(-1)).toMatch(/^completed/);
    const results: string[] = [];
    for await (const r of job.results({ maxPageSize: 25 })) results.push(r.id);
    expect(results.sort()).toEqual(items.map((i) => i.id).sort());
    const failures: string[] = [];
    for await (const f of job.failures({ maxPageSize: 25 })) failures.push(f.id);
    const view = await job.get();
    expect(failures).toHaveLength(view.totals.failed);
    expect(view.totals.succeeded + view.totals.failed).toBe(60);
  });

  test('byPage() reads a list longer than a page completely, resumes from a token, and a bad token is a 400', async () => {
    const c = client();
    const prefix = unique('paged');
    const names = Array.from({ length: 7 }, (_, i) => `${prefix}-${i}`);
    for (const name of names) await c.counters.configure(name);
    const seen: string[] = [];
    // The first token after some, not all, of this test's counters, and how many came before it.
    let middle: { token: string; before: number } | undefined;
    for await (const page of c.counters.list().byPage({ maxPageSize: 3 })) {
      expect(page.items.length).toBeLessThanOrEqual(3);
      seen.push(...page.items.map((counter) => counter.name).filter((name) => name.startsWith(prefix)));
      if (middle === undefined && seen.length > 0 && seen.length < names.length && page.continuationToken !== undefined)
        middle = { token: page.continuationToken, before: seen.length };
    }
    expect(seen).toEqual([...names].sort());
    expect(middle).toBeDefined();
    // Resuming from a token answers what followed it, once.
    const rest: string[] = [];
    for await (const page of c.counters.list().byPage({ continuationToken: middle?.token, maxPageSize: 3 }))
      rest.push(...page.items.map((counter) => counter.name).filter((name) => name.startsWith(prefix)));
    expect(rest).toEqual([...names].sort().slice(middle?.before));
    // Iterating items follows the tokens too.
    const items: string[] = [];
    for await (const counter of c.counters.list({ maxPageSize: 2 })) if (counter.name.startsWith(prefix)) items.push(counter.name);
    expect(items).toEqual([...names].sort());
    // A token is bound to its list: the sequences list refuses a counters token.
    const sequencesPage = c.sequences.list().byPage({ continuationToken: middle?.token });
    await expect(sequencesPage.next()).rejects.toMatchObject({ status: 400, code: 'ValidationFailed' });
  });

  test('stream appends with a forced retry write no line twice', async () => {
    const type = unique('events');
    let lost = 0;
    proxy.setRule((method, path) =>
      method === 'POST' && path.includes(`/streams/${type}/events`) && lost++ === 1 ? 'loseResponse' : 'forward',
    );
    const c = client(proxy.baseUrl, { retry: { baseDelayMs: 50 } });
    const writer = c.stream(type, { producer: 'e2e-writer' });
    for (let i = 0; i < 3; i++)
      await writer.append(
        [
          { i, part: 'a' },
          { i, part: 'b' },
        ],
        { ack: 'flushed' },
      );
    const appends = proxy.seen.filter((s) => s.path.includes(`/streams/${type}/events`));
    expect(appends.map((s) => s.action)).toEqual(['forward', 'loseResponse', 'forward', 'forward']);
    const state = await writer.describe();
    const lines = await readLog(host, state.route.partition, state.route.resource);
    const seqs = lines.filter((l) => l.producer === 'e2e-writer').map((l) => l.seq);
    expect(seqs).toHaveLength(6);
    expect(new Set(seqs).size).toBe(6);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  });
});

/** Waits until `condition` holds (no budget of its own: test/support/waits.ts). */
async function until(condition: () => boolean): Promise<void> {
  await untilCondition('the condition', () => (condition() ? true : undefined), { everyMs: 50 });
}
