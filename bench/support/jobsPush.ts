/**
 * The push half of the jobs benchmark: webhook processors whose batches the app POSTs to a local
 * HTTPS endpoint (this process, a self-signed certificate the devhost trusts), 100 items per request
 * against one request per item (the baseline, same run). Its own devhost, because the address guard
 * and the pusher's schedule are set when the host starts.
 */
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

import { selfSignedCert } from '../../test/support/selfSignedCert';
import type { CountingProxy } from './countingProxy';
import { countedJobsHostEnv, startDevhostChild } from './devhostChild';
import { fmt, ratio, table } from './report';

const batchedItems = Number(process.env.BENCH_JOBS_PUSH_ITEMS ?? 2_000);
const singleItems = Number(process.env.BENCH_JOBS_PUSH_SINGLE_ITEMS ?? 200);
const concurrency = 4;

interface PushRun {
  readonly label: string;
  readonly items: number;
  readonly seconds: number;
  readonly requests: number;
  readonly tx: number;
}

async function send(url: string, method: string, body: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text() };
}

export async function pushBench(proxy: CountingProxy): Promise<void> {
  const tls = await selfSignedCert(['localhost']);
  const caFile = join(tmpdir(), `tallyho-bench-ca-${randomBytes(4).toString('hex')}.pem`);
  writeFileSync(caFile, tls.cert);
  let requests = 0;
  const endpoint = createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      requests++;
      const batch = JSON.parse(text) as { items: { id: string }[] };
      const results = batch.items.map((item) => ({ id: item.id, status: 'succeeded', output: { ok: true } }));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ results }));
    });
  });
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
  const port = (endpoint.address() as AddressInfo).port;
  const hub = `benchw${randomBytes(4).toString('hex')}`;
  const host = await startDevhostChild({
    ...countedJobsHostEnv(proxy.connectionString, `jw-${randomBytes(4).toString('hex')}`, hub),
    NODE_EXTRA_CA_CERTS: caFile,
    TALLYHO_SCHEDULES_WEBHOOK_ALLOWED_HOSTS: `localhost:${port}`,
    TALLYHO_SCHEDULES_WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true',
    TALLYHO_JOBS_PUSH_SCHEDULE: '*/1 * * * * *',
  });
  const run = async (processor: string, batchSize: number, items: number, label: string): Promise<PushRun> => {
    const declared = await send(`${host.baseUrl}/api/processors/${processor}`, 'PUT', {
      type: 'webhook',
      url: `https://localhost:${port}/batches`,
      batchSize,
      concurrency,
    });
    if (declared.status !== 201 && declared.status !== 200) throw new Error(`declare answered ${declared.status}: ${declared.text}`);
    const before = requests;
    proxy.take();
    const started = performance.now();
    const payload = Array.from({ length: items }, (_, i) => ({ id: `it-${i}`, url: `https://example.com/${i}.jpg` }));
    const submitted = await send(`${host.baseUrl}/api/jobs`, 'POST', { processor, items: payload });
    if (submitted.status !== 202) throw new Error(`submit answered ${submitted.status}: ${submitted.text}`);
    const id = (JSON.parse(submitted.text) as { id: string }).id;
    for (;;) {
      await new Promise((r) => setTimeout(r, 250));
      const job = JSON.parse(await (await fetch(`${host.baseUrl}/api/jobs/${id}`)).text()) as {
        state: string;
        totals: { succeeded: number };
      };
      if (job.state === 'completed' || job.state === 'completedWithFailures') {
        if (job.totals.succeeded !== items) throw new Error(`the push job ended ${JSON.stringify(job)}`);
        break;
      }
    }
    const seconds = (performance.now() - started) / 1000;
    return { label, items, seconds, requests: requests - before, tx: proxy.take().length };
  };
  try {
    await run('warm', 100, 100, 'warm-up');
    const batched = await run('pushbatched', 100, batchedItems, `100 items per request (${batchedItems} items)`);
    const single = await run('pushsingle', 1, singleItems, `1 item per request (${singleItems} items)`);
    table(
      `Push: webhook processors (concurrency ${concurrency}, pusher every second) to a local HTTPS endpoint, submission to a completed job (read every 250 ms)`,
      [batched, single].map((r) => ({
        run: r.label,
        seconds: fmt(r.seconds),
        'items/s': fmt(r.items / r.seconds),
        'endpoint requests': r.requests,
        'storage tx/item': fmt(r.tx / r.items, 3),
      })),
    );
    ratio('push items per second, 100 per request / 1 per request', batched.items / batched.seconds, single.items / single.seconds);
  } finally {
    await host.stop();
    endpoint.closeAllConnections();
    await new Promise((resolve) => endpoint.close(resolve));
    rmSync(caFile, { force: true });
  }
}
