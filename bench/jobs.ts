/**
 * Jobs: items per second end to end and storage transactions per item, for a billing job run by
 * the devhost (envelopes of 32 items over 4 queues, storage-queue triggers, results in entity-group
 * transactions) against a naive baseline measured in the same run on the same Azurite: one queue
 * message per item, processed one by one (receive one, compute, insert its result, bump a progress
 * entity with an ETag write, delete the message).
 *
 * Transactions are counted at a proxy in front of Azurite, so the devhost's own queue traffic
 * (receives, deletes) is included; it is reported apart from the app's requests, as is the Durable
 * and streams traffic of the invoice-ledger delivery, and whatever the host does while idle.
 * Then external processors' workers (bench/support/jobsPull.ts) and webhook processors
 * (bench/support/jobsPush.ts), each against one item per lease or request; then a cancel of a big job
 * while workers lease it (bench/support/jobsCancel.ts) and the lateness of retries in a busy job
 * (bench/support/jobsRetry.ts), both on the host `--real-host` names.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';

import { startAzurite } from '../devhost/azurite';
import { loadAppConfig } from '../shared/app/settings';
import { mapTransaction } from '../shared/billing/processor';
import type { JsonObject } from '../shared/jobs/envelopes/envelope';
import { parseRateTable, defaultRatesJson } from '../shared/billing/rates';
import { hasStatus } from '../shared/storage/errors';
import { createStorageClients } from '../shared/storage/clients';
import { type CountingProxy, startCountingProxy, type StorageRequest } from './support/countingProxy';
import { countedJobsHostEnv, startDevhostChild } from './support/devhostChild';
import { cancelBench } from './support/jobsCancel';
import { pullBench } from './support/jobsPull';
import { pushBench } from './support/jobsPush';
import { retryBench } from './support/jobsRetry';
import { fmt, header, ratio, table } from './support/report';

const jobItems = Number(process.env.BENCH_JOBS_ITEMS ?? 10_000);
const naiveItems = Number(process.env.BENCH_JOBS_NAIVE_ITEMS ?? 1_000);
const idleWindowMs = 5000;

type Kind = 'app' | 'hostQueue' | 'delivery' | 'other';

interface Run {
  readonly label: string;
  readonly items: number;
  readonly seconds: number;
  readonly requests: Record<Kind, number>;
}

function transactions(n: number, seed: number) {
  let s = seed;
  const next = (): number => {
    s = (s * 1_103_515_245 + 12_345) % 2 ** 31;
    return s / 2 ** 31;
  };
  const currencies = ['EUR', 'USD', 'JPY', 'GBP'];
  return Array.from({ length: n }, (_, i) => ({
    id: `tx-${i}`,
    customerId: `c-${Math.floor(next() * 50)}`,
    amountMinor: Math.floor(next() * 1_000_000),
    currency: currencies[i % currencies.length] as string,
    taxCategory: i % 3 === 0 ? 'reduced' : 'standard',
    occurredAt: '2026-03-01T12:00:00Z',
  }));
}

function classifier(prefix: string, hub: string): (r: StorageRequest) => Kind {
  const hubLower = hub.toLowerCase();
  return (r) => {
    if (r.service === 'queue' && r.path.includes(`/${prefix}-`)) return r.method === 'POST' ? 'app' : 'hostQueue';
    if (r.path.toLowerCase().includes(hubLower) || /\/(streams|streamroutes)\b/.test(r.path)) return 'delivery';
    if (/\/(jobs|jobresults)[(/?]/.test(r.path) || /\/jobs$/.test(r.path) || r.path.includes('/$batch')) return 'app';
    return 'other';
  };
}

function tally(requests: readonly StorageRequest[], kind: (r: StorageRequest) => Kind): Record<Kind, number> {
  const out: Record<Kind, number> = { app: 0, hostQueue: 0, delivery: 0, other: 0 };
  for (const r of requests) out[kind(r)]++;
  return out;
}

async function json<T>(url: string, init?: RequestInit): Promise<{ status: number; body: T }> {
  const res = await fetch(url, init);
  return { status: res.status, body: (await res.json()) as T };
}

interface JobView {
  readonly id: string;
  readonly state: string;
  readonly delivery: string;
  readonly event: string;
  readonly totals: { succeeded: number; failed: number };
}

async function runJob(baseUrl: string, items: ReturnType<typeof transactions>): Promise<{ view: JobView; polls: number }> {
  const accepted = await json<JobView>(`${baseUrl}/api/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ processor: 'billing', items }),
  });
  if (accepted.status !== 202) throw new Error(`submit answered ${accepted.status}: ${JSON.stringify(accepted.body)}`);
  for (let polls = 1; ; polls++) {
    await new Promise((r) => setTimeout(r, 500));
    const { body } = await json<JobView>(`${baseUrl}/api/jobs/${accepted.body.id}`);
    const settled =
      (body.state === 'completed' || body.state === 'completedWithFailures') && body.delivery !== 'pending' && body.event !== 'pending';
    if (settled) return { view: body, polls };
  }
}

async function jobsRun(proxy: CountingProxy): Promise<{ run: Run; idlePerSecond: Record<Kind, number>; polls: number }> {
  const prefix = `jb-${randomBytes(4).toString('hex')}`;
  const hub = `bench${randomBytes(4).toString('hex')}`;
  const host = await startDevhostChild(countedJobsHostEnv(proxy.connectionString, prefix, hub));
  const kind = classifier(prefix, hub);
  try {
    // Warm up (tables, queues, containers, the ledger writer) with a small job, then let the host go idle.
    await runJob(host.baseUrl, transactions(64, 7));
    await new Promise((r) => setTimeout(r, 6000));
    proxy.take();
    await new Promise((r) => setTimeout(r, idleWindowMs));
    const idle = tally(proxy.take(), kind);
    const idlePerSecond = Object.fromEntries(Object.entries(idle).map(([k, v]) => [k, v / (idleWindowMs / 1000)])) as Record<Kind, number>;

    const items = transactions(jobItems, 42);
    const started = performance.now();
    const { view, polls } = await runJob(host.baseUrl, items);
    const seconds = (performance.now() - started) / 1000;
    if (view.totals.succeeded !== jobItems) throw new Error(`the job ended ${JSON.stringify(view)}`);
    return {
      run: { label: `jobs (devhost, ${jobItems} items)`, items: jobItems, seconds, requests: tally(proxy.take(), kind) },
      idlePerSecond,
      polls,
    };
  } finally {
    await host.stop();
  }
}

async function naiveRun(proxy: CountingProxy): Promise<Run> {
  const config = loadAppConfig({ AzureWebJobsStorage: proxy.connectionString });
  const storage = createStorageClients(config.storage, { retry: config.storageRetry });
  const id = randomBytes(4).toString('hex');
  const queue = await storage.queue(`naive-${id}`);
  const results = await storage.table(`naiveresults${id}`);
  const jobs = await storage.table(`naivejobs${id}`);
  const rates = parseRateTable(defaultRatesJson).table;
  await jobs.createEntity({ partitionKey: 'job', rowKey: 'job', done: 0 });
  proxy.take();
  const items = transactions(naiveItems, 42);
  const started = performance.now();
  for (let i = 0; i < items.length; i += 16) {
    await Promise.all(items.slice(i, i + 16).map((item) => queue.sendMessage(Buffer.from(JSON.stringify(item)).toString('base64'))));
  }
  for (;;) {
    const [message] = (await queue.receiveMessages({ numberOfMessages: 1, visibilityTimeout: 60 })).receivedMessageItems;
    if (message === undefined) break;
    const item = JSON.parse(Buffer.from(message.messageText, 'base64').toString('utf8')) as JsonObject;
    const outcome = mapTransaction(item, rates);
    try {
      await results.createEntity({ partitionKey: 'job', rowKey: item.id as string, ok: outcome.ok, o: JSON.stringify(outcome) });
    } catch (err) {
      if (!hasStatus(err, 409)) throw err;
    }
    for (;;) {
      const progress = await jobs.getEntity<{ done: number }>('job', 'job');
      try {
        await jobs.updateEntity({ partitionKey: 'job', rowKey: 'job', done: progress.done + 1 }, 'Replace', { etag: progress.etag });
        break;
      } catch (err) {
        if (!hasStatus(err, 412)) throw err;
      }
    }
    await queue.deleteMessage(message.messageId, message.popReceipt);
  }
  const seconds = (performance.now() - started) / 1000;
  const done = (await jobs.getEntity<{ done: number }>('job', 'job')).done;
  if (done !== naiveItems) throw new Error(`the naive run counted ${done} of ${naiveItems}`);
  const requests = proxy.take();
  return {
    label: `naive (1 message per item, ${naiveItems} items)`,
    items: naiveItems,
    seconds,
    requests: { app: requests.length, hostQueue: 0, delivery: 0, other: 0 },
  };
}

async function main(): Promise<void> {
  header('jobs');
  // BENCH_JOBS_ONLY=cancel or =retry runs those figures alone, on the host `--real-host` names (each starts its own).
  if (process.env.BENCH_JOBS_ONLY === 'cancel') {
    await cancelBench();
    return;
  }
  if (process.env.BENCH_JOBS_ONLY === 'retry') {
    await retryBench();
    return;
  }
  console.log('host: the devhost (child process) on Azurite, both started by this bench; storage counted at a proxy in front of Azurite');
  const azurite = await startAzurite();
  const proxy = await startCountingProxy(azurite.ports);
  try {
    // BENCH_JOBS_ONLY=pull or =push runs that part alone (each is measured against its own baseline).
    const only = process.env.BENCH_JOBS_ONLY;
    if (only === 'pull' || only === 'push') {
      await (only === 'pull' ? pullBench(proxy) : pushBench(proxy));
      return;
    }
    const jobs = await jobsRun(proxy);
    const naive = await naiveRun(proxy);
    const perItem = (r: Run, kinds: readonly Kind[]): number => kinds.reduce((n, k) => n + r.requests[k], 0) / r.items;
    const counted: Kind[] = ['app', 'hostQueue', 'delivery'];
    table(
      'End to end (submission to a settled job) and storage transactions per item, counted at the proxy',
      [jobs.run, naive].map((r) => ({
        run: r.label,
        seconds: fmt(r.seconds),
        'items/s': fmt(r.items / r.seconds),
        'app tx/item': fmt(perItem(r, ['app']), 3),
        'host queue tx/item': fmt(perItem(r, ['hostQueue']), 3),
        'ledger (streams, Durable) tx/item': fmt(perItem(r, ['delivery']), 3),
        'total tx/item': fmt(perItem(r, counted), 3),
        'not counted (other capabilities)': r.requests.other,
      })),
    );
    table('The devhost while idle (transactions per second, not in the figures above)', [
      { ...Object.fromEntries(Object.entries(jobs.idlePerSecond).map(([k, v]) => [k, fmt(v)])) },
    ]);
    console.log(`(the job's figures include ${jobs.polls} progress reads by the client, one every 500 ms)`);
    ratio('storage transactions per item, naive / jobs', perItem(naive, counted), perItem(jobs.run, counted), { atLeast: 20 });
    ratio('items per second, jobs / naive', jobs.run.items / jobs.run.seconds, naive.items / naive.seconds, { atLeast: 1 });
    await pullBench(proxy);
    await pushBench(proxy);
    await cancelBench();
    await retryBench();
  } finally {
    await proxy.close();
    await azurite.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
