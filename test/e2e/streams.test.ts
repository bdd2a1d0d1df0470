/**
 * Streams over HTTP on the devhost: many producers, one writer per resource, buffered writes to an
 * append blob. The logs are read straight from storage (Azurite) to check what the API promised:
 * every acknowledged event is in the log exactly once and in per-producer order, `ack=flushed`
 * answers only once the event is in the blob, a remap mid-stream loses nothing, a flush that fails
 * half way (fault proxy in front of Azurite, blob appends only) is retried without duplicates,
 * back-pressure engages and releases, a restart keeps buffered events, and bad input changes nothing.
 */
import { seededRandom } from '../../shared/clock';
import { flusherInstanceId } from '../../shared/streams/names';
import { type FaultProxy, type ProxiedRequest, startFaultProxy } from '../support/faultProxy';
import { claimHostStorage } from '../support/storageAccounts';
import { killedHostWorkBackWithinAMinute } from './support/crash';
import { type E2eHost, hostKind, ownHostTest, type RestartOptions, startE2eHost } from './support/harness';
import { expectProblem, requestJson } from './support/http';
import { unique } from './support/names';
import { readAll } from './support/pages';
import { flush, logBlobs, post, postFlushed, readLog, remap, seqsByProducer, type StreamView, until, view } from './support/streams';

interface ProducerRun {
  readonly producer: string;
  /** Sequence numbers the API acknowledged (202/200), in the order they were sent. */
  readonly acknowledged: number[];
}

/**
 * One producer: `requests` sequential requests of 1-4 events with increasing seq. Now and then it
 * sends the previous request again (as after a lost answer). A 429 or 503 is retried with the same events.
 */
async function produce(host: E2eHost, type: string, producer: string, requests: number, seed: number, query = ''): Promise<ProducerRun> {
  const random = seededRandom(seed);
  const acknowledged: number[] = [];
  let seq = 0;
  let previous: { producer: string; seq: number; data: unknown }[] | undefined;
  for (let r = 0; r < requests; r++) {
    const resend = previous !== undefined && random() < 0.15;
    const events =
      resend && previous !== undefined
        ? previous
        : Array.from({ length: 1 + Math.floor(random() * 4) }, () => ({ producer, seq: ++seq, data: { producer, n: seq } }));
    for (let attempt = 0; ; attempt++) {
      const res = await post(host, type, { events }, query);
      if (res.status === 202 || res.status === 200) break;
      if ((res.status !== 429 && res.status !== 503) || attempt > 50)
        throw new Error(`${producer}: ${res.status} ${JSON.stringify(res.body)}`);
      await new Promise((r2) => setTimeout(r2, 50));
    }
    if (!resend) acknowledged.push(...events.map((e) => e.seq));
    previous = events;
  }
  return { producer, acknowledged };
}

const routeOf = (r: { partition: string; resource: string }) => ({ partition: r.partition, resource: r.resource });

function expectExactlyOnceInOrder(runs: readonly ProducerRun[], bySeq: Map<string, number[]>): void {
  for (const run of runs)
    expect({ producer: run.producer, seqs: bySeq.get(run.producer) ?? [] }).toEqual({ producer: run.producer, seqs: run.acknowledged });
  expect([...bySeq.keys()].sort()).toEqual(runs.map((r) => r.producer).sort());
}

/**
 * An idle flusher ends after an idle recheck interval, and the next append starts a new one, which
 * flushes it. On the devhost it runs on the restart block's virtual clock (60 s recheck, 5 s flush
 * interval: time moved 30 s at a time); on real time on the first block's host, whose 200 ms flush
 * interval and 5 s recheck make it a matter of seconds. (On the restart block's host, the new
 * flusher's flush waited out that block's 30 s interval: the test took 41.5 s on the real host.)
 */
async function idleFlusherEnds(host: E2eHost, onVirtualClock: boolean): Promise<void> {
  const type = unique('idle');
  expect((await post(host, type, { producer: 'p', seq: 1 })).status).toBe(202);
  expect((await flush(host, type)).status).toBe(200);
  const { writer } = await view(host, type);
  const status = async () =>
    (
      await requestJson<{ runtimeStatus: string }>(
        host,
        'GET',
        `/runtime/webhooks/durabletask/instances/${flusherInstanceId(writer.key)}`,
        {
          key: 'admin',
        },
      )
    ).body.runtimeStatus;
  expect(await status()).toMatch(/Running|ContinuedAsNew|Pending/);
  // TALLYHO_STREAMS_IDLE_RECHECK_SECONDS (60 on the devhost, 5 on real time): one idle look, then
  // a second an interval later ends it.
  await until(
    'the idle flusher ends',
    async () => {
      await host.pass(onVirtualClock ? 30_000 : 1000);
      return (await status()) === 'Completed' ? true : undefined;
    },
    onVirtualClock ? undefined : 60_000,
  );
  expect((await post(host, type, { producer: 'p', seq: 2 })).status).toBe(202);
  expect(await status()).toMatch(/Running|ContinuedAsNew|Pending/);
  const flushed = await until(
    'the new flusher flushes the append',
    async () => {
      await host.pass(1000);
      const v = await view(host, type);
      return v.writer.flushedThrough === 2 ? v : undefined;
    },
    onVirtualClock ? undefined : 60_000,
  );
  expect(flushed.writer).toMatchObject({ accepted: 2, bufferDepth: 0 });
  expect(seqsByProducer(await readLog(host, flushed.route.partition, flushed.route.resource)).get('p')).toEqual([1, 2]);
}

/** Real time (the real host, an external one): no virtual clock to move. */
const onRealTime = hostKind() !== 'devhost';
const idleFlusherTitle = 'an idle flusher ends after an idle recheck interval; the next append starts a new one, which flushes it';

describe('streams over HTTP', () => {
  let host: E2eHost;

  beforeAll(async () => {
    host = await startE2eHost({
      env: {
        TALLYHO_STREAMS_FLUSH_INTERVAL_MS: '200',
        TALLYHO_STREAMS_FLUSH_EVENTS: '50',
        // For the idle flusher's test on real time (idleFlusherEnds): one idle look and the next, 5 s apart.
        ...(onRealTime ? { TALLYHO_STREAMS_IDLE_RECHECK_SECONDS: '5' } : {}),
      },
    });
  });
  afterAll(async () => {
    await host.dispose();
  });

  ownHostTest('16 concurrent producers to one type: every acknowledged event is in the blob once, in per-producer order', async () => {
    const type = unique('orders');
    const runs = await Promise.all(Array.from({ length: 16 }, (_, i) => produce(host, type, `producer-${i}`, 12, i + 1)));
    expect((await flush(host, type)).status).toBe(200);
    const state = await view(host, type);
    const lines = await readLog(host, state.route.partition, state.route.resource);
    expectExactlyOnceInOrder(runs, seqsByProducer(lines));
    // One writer numbered them: 0, 1, 2, … without gaps or repeats.
    expect(lines.map((l) => l.index)).toEqual(lines.map((_, i) => i));
    expect(lines.every((l) => l.type === type)).toBe(true);
    const total = runs.reduce((n, r) => n + r.acknowledged.length, 0);
    expect(state.writer).toMatchObject({ accepted: total, flushedThrough: total, bufferDepth: 0, exists: true, owns: 'yes' });
    // Size- and time-triggered flushes batched the writes: far fewer flushes than requests.
    expect(state.writer.totals.flushes).toBeLessThan(16 * 12);
  });

  ownHostTest('after an ack=flushed answer the event is already in the blob', async () => {
    const type = unique('invoices');
    await Promise.all(
      Array.from({ length: 4 }, async (_, p) => {
        for (let seq = 1; seq <= 4; seq++) {
          const res = await postFlushed(host, type, { producer: `p${p}`, seq, data: { p, seq } });
          expect(res.status).toBe(200);
          expect(res.body.flushed).toBe(true);
          const lines = await readLog(host, res.body.partition, res.body.resource);
          expect(lines.filter((l) => l.producer === `p${p}` && l.seq === seq)).toHaveLength(1);
        }
      }),
    );
    // A retry of an event that is already in the log answers at once, as a duplicate.
    const again = await post(host, type, { producer: 'p0', seq: 4 }, '?ack=flushed');
    expect(again.body).toMatchObject({ accepted: 0, duplicates: 1, flushed: true });
  });

  ownHostTest('a remap mid-stream loses, duplicates and reorders nothing', async () => {
    const type = unique('payments');
    const before = await view(host, type);
    const target = before.route.partition === 'p09' ? 'p08' : 'p09';
    const producing = Promise.all(Array.from({ length: 8 }, (_, i) => produce(host, type, `producer-${i}`, 20, 100 + i)));
    // Mid-stream: the remap comes once the writer has taken events (not after a fixed time, which on
    // a busy machine can pass before the first append).
    await until('the producers under way', async () => ((await view(host, type)).writer.totals.accepted >= 8 ? true : undefined));
    const remapped = await remap(host, type, { partition: target });
    expect(remapped.first.body).toMatchObject({ changed: true, to: { partition: target, version: 1 } });
    expect(remapped.done.status).toBe(200);
    expect(remapped.done.body).toMatchObject({ switched: true, to: { partition: target, version: 1 } });
    const runs = await producing;
    expect((await flush(host, type)).status).toBe(200);

    const oldLog = await readLog(host, before.route.partition, type);
    const newLog = await readLog(host, target, type);
    expect(oldLog.length).toBeGreaterThan(0);
    expect(newLog.length).toBeGreaterThan(0);
    expectExactlyOnceInOrder(runs, seqsByProducer([...oldLog, ...newLog]));
    const after = await view(host, type);
    expect(after.route).toMatchObject({ partition: target, version: 1, source: 'table' });
    expect(after.writer.owns).toBe('yes');
  });

  ownHostTest('the list names every type written to or remapped, each with its route (own or default)', async () => {
    const written = unique('listed-written');
    const remapped = unique('listed-remapped');
    expect((await postFlushed(host, written, { producer: 'a', seq: 1 })).status).toBe(200);
    // A remap before any append makes the type's writer too: it is listed with its own route. The
    // target differs from the type's hashed default (a remap to where it already is changes nothing).
    const target = (await view(host, remapped)).route.partition === 'p03' ? 'p04' : 'p03';
    expect((await remap(host, remapped, { partition: target })).done.status).toBe(200);
    const listed = await readAll<{ type: string; partition: string; resource: string; version: number; source: string }>(
      host,
      '/api/streams',
      {
        key: 'admin',
      },
    );
    const mine = listed.filter((r) => r.type === written || r.type === remapped);
    expect(mine).toEqual(
      [
        { type: written, ...routeOf((await view(host, written)).route), source: 'default', version: 0 },
        { type: remapped, partition: target, resource: remapped, version: 1, source: 'table' },
      ].sort((a, b) => (a.type < b.type ? -1 : 1)),
    );
    // In type order, as the pages promise.
    expect(listed.map((r) => r.type)).toEqual([...listed.map((r) => r.type)].sort());
  });

  ownHostTest('bad input answers 400 and writes nothing: no blob, no writer state', async () => {
    const type = unique('refunds');
    const bad: [string, unknown, string?][] = [
      ['missing producer', { seq: 1 }],
      ['negative seq', { producer: 'a', seq: -1 }],
      ['text seq', { producer: 'a', seq: 'one' }],
      ['fraction seq', { producer: 'a', seq: 1.5 }],
      ['unknown field', { producer: 'a', seq: 1, extra: true }],
      ['empty batch', { events: [] }],
      [
        'seq not increasing within the request',
        {
          events: [
            { producer: 'a', seq: 2 },
            { producer: 'a', seq: 2 },
          ],
        },
      ],
      [
        'one bad event spoils the batch',
        {
          events: [
            { producer: 'a', seq: 1 },
            { producer: 'a b', seq: 2 },
          ],
        },
      ],
      ['too many events', { events: Array.from({ length: 501 }, (_, i) => ({ producer: 'a', seq: i + 1 })) }],
      ['event too large', { producer: 'a', seq: 1, data: 'x'.repeat(20_000) }],
      ['bad ack', { producer: 'a', seq: 1 }, '?ack=soon'],
      ['bad wait', { producer: 'a', seq: 1 }, '?wait=maybe'],
    ];
    for (const [what, body, query] of bad) {
      const res = await post(host, type, body, query ?? '');
      expect({ what, status: res.status }).toEqual({ what, status: 400 });
      expectProblem(res, 400, 'ValidationFailed');
    }
    expectProblem(await requestJson(host, 'POST', `/api/streams/${type}/events`, { body: '{"producer":' }), 400, 'ValidationFailed');
    expectProblem(await post(host, 'not a type!', { producer: 'a', seq: 1 }), 400, 'ValidationFailed');
    expectProblem(await requestJson(host, 'PUT', `/api/streams/${type}/route`, { body: {}, key: 'admin' }), 400, 'ValidationFailed');
    expectProblem(
      await requestJson(host, 'PUT', `/api/streams/${type}/route`, { body: { partition: 'P 1' }, key: 'admin' }),
      400,
      'ValidationFailed',
    );

    const state = await view(host, type);
    expect(state.writer).toMatchObject({ exists: false, accepted: 0 });
    expect(state.route).toMatchObject({ version: 0, source: 'default' });
    // Nor did a refused append take a place among the types.
    expect((await readAll<{ type: string }>(host, '/api/streams', { key: 'admin' })).map((r) => r.type)).not.toContain(type);
    const writer = await requestJson(
      host,
      'GET',
      `/runtime/webhooks/durabletask/entities/streamWriter/${encodeURIComponent(state.writer.key)}`,
      {
        key: 'admin',
      },
    );
    expect(writer.status).toBe(404);
    expect(await logBlobs(host, state.route.partition, state.route.resource)).toEqual([]);
  });

  if (onRealTime) ownHostTest(idleFlusherTitle, () => idleFlusherEnds(host, false));
});

describe('streams with storage misbehaving (fault proxy in front of Azurite)', () => {
  let proxy: FaultProxy;
  let host: E2eHost;
  // Appends to the stream logs only (the container `streams`); the devhost's own durable store may use append blobs too.
  const isAppend = (r: ProxiedRequest): boolean =>
    r.service === 'blob' && r.method === 'PUT' && /^\/[^/]+\/streams\//.test(r.path) && r.path.includes('comp=appendblock');

  beforeAll(async () => {
    proxy = await startFaultProxy(claimHostStorage());
    host = await startE2eHost({
      env: {
        AzureWebJobsStorage: proxy.connectionString,
        TALLYHO_STORAGE_MAX_TRIES: '2',
        TALLYHO_STORAGE_TRY_TIMEOUT_MS: '2000',
        TALLYHO_STREAMS_FLUSH_INTERVAL_MS: '200',
        TALLYHO_STREAMS_FLUSH_EVENTS: '1000',
        TALLYHO_STREAMS_MAX_BLOCK_BYTES: '1024',
        TALLYHO_STREAMS_MAX_EVENT_BYTES: '256',
        TALLYHO_STREAMS_MAX_BUFFERED: '40',
        TALLYHO_STREAMS_MAX_BATCH_EVENTS: '40',
        TALLYHO_STREAMS_MAX_WAIT_SECONDS: '20',
      },
    });
  });
  afterAll(async () => {
    await host.dispose();
    await proxy.close();
  });
  afterEach(() => proxy.setRules());

  ownHostTest('a flush that fails half way is retried and writes no duplicate', async () => {
    const type = unique('ledger');
    let appends = 0;
    // The first block lands but its answer is lost; the second block fails on every try of the first attempt.
    proxy.setRules((r) => {
      if (!isAppend(r)) return undefined;
      appends++;
      if (appends === 1) return { kind: 'loseResponse' };
      if (r.headers['x-ms-blob-condition-appendpos'] !== '0' && appends <= 4) return { kind: 'status', status: 503 };
      return undefined;
    });
    const events = Array.from({ length: 30 }, (_, i) => ({ producer: 'p', seq: i + 1, data: { i, pad: 'x'.repeat(60) } }));
    const res = await postFlushed(host, type, { events });
    expect(res.status).toBe(200);
    expect(appends).toBeGreaterThan(4);
    const state = await view(host, type);
    expect(state.writer.lastFlush?.blocksFoundWritten).toBeGreaterThanOrEqual(1);
    const blobs = await logBlobs(host, state.route.partition, state.route.resource);
    expect(blobs).toHaveLength(1);
    const lines = await readLog(host, state.route.partition, state.route.resource);
    expect(lines.map((l) => l.seq)).toEqual(events.map((e) => e.seq));
  });

  ownHostTest('back-pressure: a full buffer answers 429 with Retry-After, and takes events again once the log recovers', async () => {
    const type = unique('metrics');
    proxy.setRules((r) => (isAppend(r) ? { kind: 'status', status: 503 } : undefined));
    const fill = await post(host, type, { events: Array.from({ length: 40 }, (_, i) => ({ producer: 'p', seq: i + 1 })) });
    expect(fill.status).toBe(202);
    const refused = await post(host, type, { producer: 'q', seq: 1 });
    expectProblem(refused, 429, 'TooManyRequests');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const full: StreamView = await view(host, type);
    expect(full.writer.bufferDepth).toBe(40);
    expect(full.writer.totals.refusedFull).toBeGreaterThanOrEqual(1);
    await until('a failed flush attempt', async () => ((await view(host, type)).writer.lastError !== null ? true : undefined));

    // A producer that asks to wait is held, and answered once the log takes writes again.
    const waiting = post(host, type, { producer: 'q', seq: 1 }, '?wait=true');
    // Held: the writer has refused it as full at least once (it asks again until there is room).
    const refusedBefore = full.writer.totals.refusedFull;
    await until('the waiting append refused as full', async () =>
      (await view(host, type)).writer.totals.refusedFull > refusedBefore ? true : undefined,
    );
    proxy.setRules();
    const released = await waiting;
    expect(released.status).toBe(202);
    expect(released.body.accepted).toBe(1);
    expect((await flush(host, type)).status).toBe(200);
    const lines = await readLog(host, full.route.partition, full.route.resource);
    expect(lines.map((l) => `${l.producer}${l.seq}`)).toEqual([...Array.from({ length: 40 }, (_, i) => `p${i + 1}`), 'q1']);
  });
});

describe('streams across a host restart', () => {
  let host: E2eHost;
  // The devhost moves its virtual clock; the real host's time is real, so its timers are set to come
  // due after a restart (one takes 5–10 s there) yet soon enough to wait for.
  const flushIntervalMs = onRealTime ? 30_000 : 5_000;

  beforeAll(async () => {
    host = await startE2eHost({
      virtualClock: 'where available',
      env: {
        TALLYHO_STREAMS_FLUSH_INTERVAL_MS: String(flushIntervalMs),
        TALLYHO_STREAMS_FLUSH_EVENTS: '1000',
        ...(onRealTime
          ? {
              TALLYHO_STREAMS_IDLE_RECHECK_SECONDS: '5',
              ...killedHostWorkBackWithinAMinute,
            }
          : {}),
      },
    });
  });
  afterAll(async () => {
    await host?.dispose();
  });

  /**
   * How long the real host may take to flush after the restart. A killed host may have fetched
   * control-queue messages (the entity's answer to the flusher) or a work item without finishing
   * them: the Azure Storage provider hands them out again only after `controlQueueVisibilityTimeout`
   * / `workItemQueueVisibilityTimeout` (5 minutes each by default; Durable Functions host.json
   * reference). This host sets both to one minute (killedHostWorkBackWithinAMinute). Meanwhile a
   * timer message that overtook the answer is "received out of order" and returned with a growing
   * delay, so the flush may come a while after the minute.
   */
  const realTimeFlushPatienceMs = (restart: RestartOptions): number => (restart.kill === true ? 240_000 : 90_000);

  /**
   * Buffers events from 4 producers (the flush interval is far away on the virtual clock), restarts
   * the host, and checks that the writer came back with every acknowledged event and flushes each
   * of them exactly once. A graceful restart (SIGTERM) lets the host drain; a kill (SIGKILL) does
   * not, so only what the durable store had made durable before the acknowledgement can survive.
   */
  async function bufferedEventsSurvive(restart: RestartOptions, seed: number): Promise<void> {
    const type = unique('audit');
    const runs = await Promise.all(Array.from({ length: 4 }, (_, i) => produce(host, type, `producer-${i}`, 5, seed + i)));
    const before = await view(host, type);
    const total = runs.reduce((n, r) => n + r.acknowledged.length, 0);
    expect(before.writer).toMatchObject({ accepted: total, flushedThrough: 0, bufferDepth: total });
    expect(await logBlobs(host, before.route.partition, before.route.resource)).toEqual([]);
    // While events wait in the buffer, the view says since when and for how long.
    expect(before.writer.flushLagMs).toBeGreaterThan(0);
    expect(before.writer.oldestUnflushedAt).not.toBeNull();
    const oldest = Date.parse(before.writer.oldestUnflushedAt ?? '');
    expect(Number.isFinite(oldest)).toBe(true);

    // The devhost's virtual clock comes back where it stopped (a clock that starts at real time may
    // find the flush timer due at once, and a busy machine then flushes before the view below).
    const stoppedAt = onRealTime ? undefined : Date.parse((await host.advanceClock(0)).now);
    await host.restart({ ...restart, ...(stoppedAt === undefined ? {} : { clockStartsAt: stoppedAt }) });
    // The writer's state came back from storage, the oldest buffered event's time with it. On real
    // time the timer comes due a flush interval after the first event whatever the host does, so that
    // holds only for a view asked before then (a restart that took longer finds it flushed, and what
    // follows checks that every event was flushed once).
    const askedAt = Date.now();
    const recovered = await view(host, type);
    if (!onRealTime || askedAt < oldest + flushIntervalMs)
      expect(recovered.writer).toMatchObject({ accepted: total, bufferDepth: total, oldestUnflushedAt: before.writer.oldestUnflushedAt });
    else expect(recovered.writer).toMatchObject({ accepted: total });
    // The flusher's durable timer was set on the old host's virtual clock. A restarted host's virtual
    // clock starts at real time, so the timer may be due at once, or (when the old clock had been
    // moved ahead) still in the future: keep moving time (a flush interval at a time on the devhost,
    // a second on real time) until it fires.
    let last: StreamView | undefined;
    const flushed = await until(
      'the timer flush after the restart',
      async () => {
        await host.pass(onRealTime ? 1000 : flushIntervalMs);
        last = await view(host, type);
        return last.writer.flushedThrough === total ? last : undefined;
      },
      onRealTime ? realTimeFlushPatienceMs(restart) : undefined,
    ).catch((err: unknown) => {
      throw new Error(`${String(err)}; last view: ${JSON.stringify(last)}`);
    });
    expect(flushed.writer).toMatchObject({ bufferDepth: 0, flushLagMs: 0, oldestUnflushedAt: null });
    const lines = await readLog(host, before.route.partition, before.route.resource);
    expectExactlyOnceInOrder(runs, seqsByProducer(lines));
    expect(lines.map((l) => l.index)).toEqual(lines.map((_, i) => i));
  }

  if (!onRealTime) ownHostTest(idleFlusherTitle, () => idleFlusherEnds(host, true));

  ownHostTest('every ack=buffered event survives a restart between buffering and flushing, and the timer flush still happens', () =>
    bufferedEventsSurvive({}, 200),
  );

  ownHostTest(
    'every ack=buffered event survives the host being killed (SIGKILL) while they are buffered and unflushed',
    () => bufferedEventsSurvive({ kill: true }, 300),
    onRealTime ? 300_000 : 120_000,
  );
});
