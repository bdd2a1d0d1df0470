/**
 * Schedules: creation rate and fire-time lateness, on Azurite and the devhost (started in this
 * process with the app, real clock).
 *   - Create N one-offs (`POST /api/schedules`, 32 at a time) due at whole seconds spread over
 *     SPREAD seconds, starting far enough ahead that all are created (pending) before the first is
 *     due; target: a queue message carrying its due time.
 *     Created/s is N over the time the creates took (index row, orchestration start, activation).
 *   - Lateness of each fire = when this process receives the message from the queue − its due
 *     time, with N pending schedules (a poller drains the queue continuously).
 * Baselines, measured in the same run: an in-process scheduler (one `setTimeout` per item, which
 * sends the same message when due), observed by the same poller; and for creation, one plain table
 * insert per schedule at the same concurrency (the least a durable schedule has to write).
 */
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';

import { TableClient } from '@azure/data-tables';
import { QueueServiceClient } from '@azure/storage-queue';

import { startAzurite } from '../devhost/azurite';
import { defaultExtensions } from '../devhost/extensions';
import { startHost } from '../devhost/host';
import { header, Latency, machine, ratio, type Row, table } from './support/report';

/** SCHEDULES_BENCH_N=100 for a quick smoke run; the published figures use the default. */
const n = Number(process.env.SCHEDULES_BENCH_N ?? 1000);
const spreadSeconds = Number(process.env.SCHEDULES_BENCH_SPREAD_SECONDS ?? 15);
/** How far ahead the first fire is; by default from the creation rate of the warm-up, so creating never overlaps firing. */
const leadOverrideMs = process.env.SCHEDULES_BENCH_LEAD_MS === undefined ? undefined : Number(process.env.SCHEDULES_BENCH_LEAD_MS);
const concurrency = 32;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function pool(count: number, limit: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, count) }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

/** Due times: whole seconds, `n` of them spread evenly over `spreadSeconds`, starting `lead` ms from now. */
function dueTimes(count: number, lead: number): number[] {
  const first = Math.ceil((Date.now() + lead) / 1000) * 1000;
  return Array.from({ length: count }, (_, i) => first + Math.floor((i * spreadSeconds) / count) * 1000);
}

interface Observed {
  readonly latency: Latency;
  readonly received: number;
}

/** Drains `queue` until `expected` messages arrived (or the deadline), recording receive time − due. */
async function observe(connection: string, queue: string, expected: number, deadline: number): Promise<Observed> {
  const client = QueueServiceClient.fromConnectionString(connection).getQueueClient(queue);
  await client.createIfNotExists();
  const latency = new Latency();
  const seen = new Set<string>();
  while (seen.size < expected && Date.now() < deadline) {
    const batch = await client.receiveMessages({ numberOfMessages: 32, visibilityTimeout: 600 });
    const now = Date.now();
    for (const m of batch.receivedMessageItems) {
      const { id, due } = JSON.parse(Buffer.from(m.messageText, 'base64').toString('utf8')) as { id: string; due: number };
      if (seen.has(id)) continue;
      seen.add(id);
      latency.recordMs(Math.max(0, now - due));
    }
    if (batch.receivedMessageItems.length === 0) await sleep(20);
  }
  return { latency, received: seen.size };
}

async function call(baseUrl: string, body: unknown): Promise<number> {
  const res = await fetch(`${baseUrl}/api/schedules`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  await res.text();
  return res.status;
}

interface Run {
  readonly createdPerSecond: number;
  readonly observed: Observed;
}

async function durableSchedules(baseUrl: string, connection: string, count: number, lead: number): Promise<Run> {
  const queue = `bench-sched-${randomBytes(4).toString('hex')}`;
  const due = dueTimes(count, lead);
  const tag = randomBytes(3).toString('hex');
  const started = performance.now();
  await pool(count, concurrency, async (i) => {
    const id = `bench-${tag}-${i}`;
    const at = due[i] as number;
    const status = await call(baseUrl, {
      id,
      at: new Date(at).toISOString(),
      target: { type: 'queueMessage', queue, message: { id, due: at } },
    });
    if (status !== 201) throw new Error(`creating schedule ${i} answered ${status}`);
  });
  const createdMs = performance.now() - started;
  if (Date.now() > (due[0] as number)) {
    console.warn(
      `WARNING: creating ${count} schedules took ${Math.round(createdMs)} ms, past the first due time; raise SCHEDULES_BENCH_LEAD_MS`,
    );
  }
  const observed = await observe(connection, queue, count, (due[count - 1] as number) + 120_000);
  return { createdPerSecond: (count * 1000) / createdMs, observed };
}

async function setTimeoutBaseline(connection: string, count: number, lead: number): Promise<Observed> {
  const queue = `bench-base-${randomBytes(4).toString('hex')}`;
  const client = QueueServiceClient.fromConnectionString(connection).getQueueClient(queue);
  await client.createIfNotExists();
  const due = dueTimes(count, lead);
  const timers = due.map((at, i) =>
    setTimeout(
      () => {
        void client.sendMessage(Buffer.from(JSON.stringify({ id: `base-${i}`, due: at })).toString('base64'));
      },
      Math.max(0, at - Date.now()),
    ),
  );
  const observed = await observe(connection, queue, count, (due[count - 1] as number) + 120_000);
  for (const t of timers) clearTimeout(t);
  return observed;
}

async function insertBaseline(connection: string, count: number): Promise<number> {
  const client = TableClient.fromConnectionString(connection, `benchinsert${randomBytes(4).toString('hex')}`, {
    allowInsecureConnection: true,
  });
  await client.createTable();
  const started = performance.now();
  await pool(count, concurrency, async (i) => {
    await client.createEntity({ partitionKey: `bench-${i}`, rowKey: 'schedule', definition: '{"at":"…"}', state: 'active' });
  });
  return (count * 1000) / (performance.now() - started);
}

async function main(): Promise<void> {
  header('schedules');
  console.log(`${n} one-off schedules due at whole seconds over ${spreadSeconds} s; queueMessage target`);
  const azurite = await startAzurite();
  const host = await startHost({
    appRoot: resolve(__dirname, '..', '..'),
    port: 0,
    quiet: true,
    extensions: defaultExtensions(),
    env: {
      AzureWebJobsStorage: azurite.connectionString,
      AzureFunctionsJobHost__extensions__durableTask__hubName: `benchsched${Date.now() % 100000}`,
      TALLYHO_COUNTERS_ROLLUP_SCHEDULE: '0 0 0 1 1 *',
      TALLYHO_JOBS_RECONCILE_SCHEDULE: '0 0 0 1 1 *',
      TALLYHO_SCHEDULES_RECONCILE_SCHEDULE: '0 0 0 1 1 *',
    },
  });
  try {
    // Warm-up: every code path once (orchestrations, activities, the queue target, the poller).
    const warm = await durableSchedules(host.baseUrl, azurite.connectionString, 50, 10_000);
    await setTimeoutBaseline(azurite.connectionString, 10, 1000);
    const leadMs = leadOverrideMs ?? Math.min(300_000, Math.max(20_000, (1.5 * n * 1000) / warm.createdPerSecond + 5000));
    console.log(`first fire ${Math.round(leadMs / 1000)} s ahead (warm-up created ${warm.createdPerSecond.toFixed(1)}/s)`);

    const baselineCreates = await insertBaseline(azurite.connectionString, n);
    const schedules = await durableSchedules(host.baseUrl, azurite.connectionString, n, leadMs);
    const baseline = await setTimeoutBaseline(azurite.connectionString, n, 5000);
    const rows: Row[] = [
      {
        design: 'schedules (devhost + Azurite)',
        'created/s': schedules.createdPerSecond,
        'lateness p50 ms': schedules.observed.latency.percentileMs(50),
        'p99 ms': schedules.observed.latency.percentileMs(99),
        'max ms': schedules.observed.latency.maxMs,
        fired: `${schedules.observed.received}/${n}`,
      },
      {
        design: 'baseline: setTimeout in process',
        'created/s': '-',
        'lateness p50 ms': baseline.latency.percentileMs(50),
        'p99 ms': baseline.latency.percentileMs(99),
        'max ms': baseline.latency.maxMs,
        fired: `${baseline.received}/${n}`,
      },
      {
        design: 'baseline: one table insert per schedule',
        'created/s': baselineCreates,
        'lateness p50 ms': '-',
        'p99 ms': '-',
        'max ms': '-',
        fired: '-',
      },
    ];
    table(`Schedules — ${machine()}`, rows);
    ratio('schedules created/s vs one table insert', schedules.createdPerSecond, baselineCreates);
    ratio('lateness p50 vs setTimeout', schedules.observed.latency.percentileMs(50), Math.max(1, baseline.latency.percentileMs(50)));
    ratio('lateness p99 vs setTimeout', schedules.observed.latency.percentileMs(99), Math.max(1, baseline.latency.percentileMs(99)));
    if (schedules.observed.received < n)
      console.warn(`WARNING: only ${schedules.observed.received} of ${n} schedules fired within two minutes of their time`);
  } finally {
    await host.stop();
    await azurite.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
