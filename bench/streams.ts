/**
 * Streams: events per second that reach the log through one writer, buffering (flush at N = 100
 * events or T = 1 s, a flush takes everything buffered) against a writer that flushes every event
 * (N = 1, one event per flush), measured in the same run on the same Azurite and devhost build; and
 * the `ack=flushed` latency against the flush interval T.
 *
 * Each mode gets a fresh devhost (child process, task hub of its own) and 16 producers that send one
 * event per request with `wait=true` (a full buffer holds the request instead of answering 429), as
 * fast as they are answered. The rate is read from the writer's flushed-through mark over a window
 * after a warm-up, so a backlog left at the end does not count.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';

import { startAzurite } from '../devhost/azurite';
import { type DevhostChild, startDevhostChild } from './support/devhostChild';
import { header, Latency, ratio, type Row, table } from './support/report';

const producers = 16;
const warmupMs = 3000;
const windowMs = 10_000;
const flushedProducers = 8;
const flushedWindowMs = 10_000;
const flushIntervalMs = 1000;

type Host = Pick<DevhostChild, 'baseUrl' | 'stop'>;

/** A devhost child with a task hub of its own, so one mode's leftovers never reach the next. */
async function startHost(storage: string, env: Record<string, string>): Promise<Host> {
  const hub = `bench${randomBytes(5).toString('hex')}`;
  return startDevhostChild({
    AzureWebJobsStorage: storage,
    AzureFunctionsJobHost__extensions__durableTask__hubName: hub,
    TALLYHO_TASK_HUB: hub,
    ...env,
  });
}

interface WriterView {
  readonly writer: { accepted: number; flushedThrough: number; totals: { flushes: number } };
}

async function readWriter(host: Host, type: string): Promise<WriterView['writer']> {
  const res = await fetch(`${host.baseUrl}/api/streams/${type}`);
  return ((await res.json()) as WriterView).writer;
}

async function append(host: Host, type: string, body: unknown, query: string): Promise<number> {
  const res = await fetch(`${host.baseUrl}/api/streams/${type}/events${query}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
  return res.status;
}

/** Producers that send one event per request until `stop`; each event is retried until acknowledged. */
async function produce(
  host: Host,
  type: string,
  count: number,
  query: string,
  stopAt: () => boolean,
  latency: (ms: number, at: number) => void,
) {
  let failures = 0;
  await Promise.all(
    Array.from({ length: count }, async (_, p) => {
      let seq = 0;
      while (!stopAt()) {
        seq++;
        for (;;) {
          const started = performance.now();
          const status = await append(host, type, { producer: `producer-${p}`, seq, data: { producer: p, seq, amount: seq * 7 } }, query);
          if (status === 200 || status === 202) {
            latency(performance.now() - started, started);
            break;
          }
          failures++;
          if (stopAt()) return;
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    }),
  );
  return failures;
}

interface ThroughputResult {
  readonly mode: string;
  readonly flushedPerSecond: number;
  readonly acceptedPerSecond: number;
  readonly eventsPerFlush: number;
  readonly latency: Latency;
  readonly failures: number;
}

async function throughput(storage: string, mode: string, env: Record<string, string>): Promise<ThroughputResult> {
  const host = await startHost(storage, env);
  try {
    const type = `bench-${mode}`;
    await append(host, type, { producer: 'warmup', seq: 1 }, '');
    const started = performance.now();
    const windowStart = started + warmupMs;
    const windowEnd = windowStart + windowMs;
    const latency = new Latency();
    let first: WriterView['writer'] | undefined;
    let last: WriterView['writer'] | undefined;
    const sampler = (async () => {
      await new Promise((r) => setTimeout(r, warmupMs));
      first = await readWriter(host, type);
      await new Promise((r) => setTimeout(r, windowMs));
      last = await readWriter(host, type);
    })();
    const failures = await produce(
      host,
      type,
      producers,
      '?wait=true',
      () => performance.now() >= windowEnd,
      (ms, at) => {
        if (at >= windowStart && at + ms <= windowEnd) latency.recordMs(ms);
      },
    );
    await sampler;
    if (first === undefined || last === undefined) throw new Error('no samples');
    const flushes = last.totals.flushes - first.totals.flushes;
    const flushed = last.flushedThrough - first.flushedThrough;
    return {
      mode,
      flushedPerSecond: flushed / (windowMs / 1000),
      acceptedPerSecond: (last.accepted - first.accepted) / (windowMs / 1000),
      eventsPerFlush: flushes === 0 ? 0 : flushed / flushes,
      latency,
      failures,
    };
  } finally {
    await host.stop();
  }
}

async function flushedLatency(storage: string): Promise<Latency> {
  const host = await startHost(storage, { TALLYHO_STREAMS_FLUSH_INTERVAL_MS: String(flushIntervalMs) });
  try {
    const type = 'bench-flushed';
    await append(host, type, { producer: 'warmup', seq: 1 }, '?ack=flushed');
    const latency = new Latency();
    const end = performance.now() + flushedWindowMs;
    await produce(
      host,
      type,
      flushedProducers,
      '?ack=flushed',
      () => performance.now() >= end,
      (ms) => latency.recordMs(ms),
    );
    return latency;
  } finally {
    await host.stop();
  }
}

async function main(): Promise<void> {
  header('streams');
  const azurite = await startAzurite();
  try {
    // Same intake and bounds in both modes; only the flush policy differs.
    const perEvent = await throughput(azurite.connectionString, 'flush-every-event', {
      TALLYHO_STREAMS_FLUSH_EVENTS: '1',
      TALLYHO_STREAMS_FLUSH_MAX_EVENTS: '1',
    });
    const buffered = await throughput(azurite.connectionString, 'buffered', { TALLYHO_STREAMS_FLUSH_INTERVAL_MS: String(flushIntervalMs) });
    const rows: Row[] = [perEvent, buffered].map((r) => ({
      mode: r.mode,
      'flushed events/s': r.flushedPerSecond,
      'accepted events/s': r.acceptedPerSecond,
      'events per flush': r.eventsPerFlush,
      'ack p50 ms': r.latency.percentileMs(50),
      'ack p99 ms': r.latency.percentileMs(99),
      'retried answers': r.failures,
    }));
    table(`One writer, ${producers} producers, one event per request (ack=buffered, wait=true), ${windowMs / 1000} s window`, rows);
    ratio('flushed events/s, buffering vs a writer that flushes every event', buffered.flushedPerSecond, perEvent.flushedPerSecond, {
      atLeast: 10,
    });

    const latency = await flushedLatency(azurite.connectionString);
    table(`ack=flushed latency, ${flushedProducers} producers, T = ${flushIntervalMs} ms, N = 100`, [
      {
        requests: latency.count,
        'p50 ms': latency.percentileMs(50),
        'p99 ms': latency.percentileMs(99),
        'max ms': latency.maxMs,
        'p50 / T': latency.percentileMs(50) / flushIntervalMs,
        'p99 / T': latency.percentileMs(99) / flushIntervalMs,
      },
    ]);
  } finally {
    await azurite.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
