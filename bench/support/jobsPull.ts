/**
 * The pull half of the jobs benchmark, on its own devhost (child process) over the same counting
 * proxy and Azurite: workers of an external processor leasing 100 items per lease against 1 item per
 * lease (the baseline, same run), and 1,000 idle long-poll lease requests against one.
 *
 * Every storage request seen at the proxy during a phase is counted, the devhost's own queue polling
 * included (its idle floor is printed apart, so it can be read out of the figures).
 */
import { randomBytes } from 'node:crypto';

import type { CountingProxy, StorageRequest } from './countingProxy';
import { countedJobsHostEnv, startDevhostChild } from './devhostChild';
import { declareExternal, holdIdleLeases, pullRun, type PullRun } from './leaseWorkers';
import { fmt, ratio, table } from './report';

const batchedItems = Number(process.env.BENCH_JOBS_PULL_ITEMS ?? 5_000);
const singleItems = Number(process.env.BENCH_JOBS_PULL_SINGLE_ITEMS ?? 300);
const workers = Number(process.env.BENCH_JOBS_PULL_WORKERS ?? 4);
const idleWaiters = 1_000;
const windowMs = 5_000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Requests on the processor's own queue (receives, visibility updates, deletes, sends). */
const onQueue = (requests: readonly StorageRequest[], processor: string): number =>
  requests.filter((r) => r.service === 'queue' && r.path.includes(`-x-${processor}`)).length;

interface Idle {
  readonly label: string;
  readonly perSecond: number;
  readonly queuePerSecond: number;
  readonly answered: Record<number, number>;
}

async function idlePhase(proxy: CountingProxy, baseUrl: string, processor: string, waiters: number): Promise<Idle> {
  // The window sits inside the requests' 40 s wait, after they have all arrived (each new waiter gets
  // a poll of its own, so arrivals are not idle): they are all held open while it is measured.
  const held = holdIdleLeases(baseUrl, processor, waiters, 40);
  await sleep(15_000);
  proxy.take();
  await sleep(windowMs);
  const seen = proxy.take();
  const answered: Record<number, number> = {};
  for (const status of await held) answered[status] = (answered[status] ?? 0) + 1;
  if (answered[204] !== waiters) throw new Error(`idle lease requests answered ${JSON.stringify(answered)}`);
  return {
    label: `${waiters} idle lease request${waiters === 1 ? '' : 's'} (wait 40 s)`,
    perSecond: seen.length / (windowMs / 1000),
    queuePerSecond: onQueue(seen, processor) / (windowMs / 1000),
    answered,
  };
}

export async function pullBench(proxy: CountingProxy): Promise<void> {
  const prefix = `jp-${randomBytes(4).toString('hex')}`;
  const hub = `benchp${randomBytes(4).toString('hex')}`;
  const host = await startDevhostChild(countedJobsHostEnv(proxy.connectionString, prefix, hub));
  try {
    await declareExternal(host.baseUrl, 'batched', 100);
    await declareExternal(host.baseUrl, 'single', 1);
    await declareExternal(host.baseUrl, 'idle', 100);
    // Warm up both paths (queues and tables created, code loaded), then measure the host's idle floor.
    await pullRun(host.baseUrl, 'batched', 200, workers);
    await pullRun(host.baseUrl, 'single', 10, workers);
    await sleep(3_000);
    proxy.take();
    await sleep(windowMs);
    const floor = proxy.take().length / (windowMs / 1000);

    const measure = async (processor: string, items: number): Promise<{ run: PullRun; tx: number }> => {
      proxy.take();
      const run = await pullRun(host.baseUrl, processor, items, workers);
      return { run, tx: proxy.take().length };
    };
    const batched = await measure('batched', batchedItems);
    const single = await measure('single', singleItems);
    const rows = [
      { label: `100 items per lease (${batchedItems} items)`, ...batched },
      { label: `1 item per lease (${singleItems} items)`, ...single },
    ];
    table(
      `Pull: ${workers} worker loops of an external processor, submission to the completion that finished the job; every storage request at the proxy`,
      rows.map(({ label, run, tx }) => ({
        run: label,
        seconds: fmt(run.seconds),
        'items/s': fmt(run.items / run.seconds),
        leases: run.leases,
        'empty polls': run.emptyPolls,
        'storage tx': tx,
        'tx/item': fmt(tx / run.items, 3),
      })),
    );
    console.log(`(the devhost's idle floor, included above: ${fmt(floor)} storage requests/s)`);
    const batchedTxPerItem = batched.tx / batched.run.items;
    console.log(
      `storage tx per item, 100 per lease: ${fmt(batchedTxPerItem, 3)} [target ≤ 0.2: ${batchedTxPerItem <= 0.2 ? 'met' : 'NOT met'}]`,
    );
    ratio('items per second, 100 per lease / 1 per lease', batched.run.items / batched.run.seconds, single.run.items / single.run.seconds, {
      atLeast: 20,
    });
    ratio('storage tx per item, 1 per lease / 100 per lease', single.tx / single.run.items, batchedTxPerItem);

    const one = await idlePhase(proxy, host.baseUrl, 'idle', 1);
    const many = await idlePhase(proxy, host.baseUrl, 'idle', idleWaiters);
    table(
      'Long poll on an empty processor: storage requests per second while the requests are held open (a 5 s window)',
      [one, many].map((i) => ({
        held: i.label,
        'storage req/s (all)': fmt(i.perSecond),
        "req/s on the processor's queue": fmt(i.queuePerSecond),
        'answered 204': i.answered[204] ?? 0,
      })),
    );
    ratio(`idle storage requests per second, ${idleWaiters} waiters / 1 waiter`, many.perSecond, one.perSecond, { atMost: 2 });
  } finally {
    await host.stop();
  }
}
