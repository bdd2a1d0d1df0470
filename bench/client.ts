/**
 * The TypeScript client (@tallyho/client) against one devhost on one Azurite, both started here:
 *   sequences — numbers/s through `sequence.next()` (numbers from blocks the client reserved with one
 *               `count: N` request each) against the baseline of one HTTP call per number
 *               (`POST /next` without a count), 16 concurrent callers each, same host, same run;
 *               and HTTP requests per 1,000 numbers;
 *   counters  — increments/s through `client.increment()` (increments coalesced per counter: those
 *               made in one turn of the event loop, and those made while the requests in flight are
 *               out, go as one) against one request per increment, 64 concurrent writers that each
 *               await their increment (as request handlers would), and requests per 1,000; with 1
 *               and 4 (the default) requests in flight per counter. After the run the counter is
 *               read (consistent) and must equal the increments that resolved;
 *   streams   — events/s through `stream.append()` (one writer, 64 callers that each await their
 *               append; the same batcher with one request in flight, for seq order) against one
 *               request per append.
 * Each phase runs for a fixed window after a short warm-up. Requests are counted at the client's
 * fetch. The client is the package's build (clients/typescript/dist, made by the root build).
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

// The client is an ES module and this file is CommonJS: its types come in type-only, the code by import().
import type * as ClientModule from '../clients/typescript/src/index.js' with { 'resolution-mode': 'import' };
import { startAzurite } from '../devhost/azurite';
import { startDevhostChild } from './support/devhostChild';
import { fmt, header, type Row, ratio, table } from './support/report';
import { sampleSettings } from './support/settings';

const repoRoot = join(__dirname, '..', '..');
const warmupMs = 500;
const windowMs = 3000;

interface Load {
  readonly units: number;
  readonly requests: number;
  readonly seconds: number;
}

/** Units per second of a load. */
function rate(l: Load): number {
  return l.units / l.seconds;
}

/** Runs `workers` loops of `op` for the window; `op` resolves with the units it produced. */
async function load(workers: number, op: () => Promise<number>, requests: () => number): Promise<Load> {
  const drive = async (ms: number): Promise<number> => {
    const end = performance.now() + ms;
    const counts = await Promise.all(
      Array.from({ length: workers }, async () => {
        let n = 0;
        while (performance.now() < end) n += await op();
        return n;
      }),
    );
    return counts.reduce((a, b) => a + b, 0);
  };
  await drive(warmupMs);
  const before = requests();
  const started = performance.now();
  const units = await drive(windowMs);
  return { units, requests: requests() - before, seconds: (performance.now() - started) / 1000 };
}

async function main(): Promise<void> {
  header('client');
  const { TallyhoClient } = (await import(
    pathToFileURL(join(repoRoot, 'clients', 'typescript', 'dist', 'index.js')).href
  )) as typeof ClientModule;
  const azurite = await startAzurite();
  const devhost = await startDevhostChild({ ...sampleSettings(), AzureWebJobsStorage: azurite.connectionString });
  try {
    const api = `${devhost.baseUrl}/api`;
    let sent = 0;
    const counted = (input: string, init: RequestInit): Promise<Response> => {
      sent++;
      return fetch(input, init);
    };
    const client = new TallyhoClient({ baseUrl: api, fetch: counted });
    const post = async (path: string, body: unknown): Promise<void> => {
      const res = await counted(`${api}/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`POST ${path} answered ${res.status}`);
      await res.arrayBuffer();
    };

    const sequenceName = `bench-${Date.now()}`;
    await client.sequences.configure(sequenceName, { prefix: 'B-', width: 9, checkDigit: true, blockSize: { min: 100, max: 100_000 } });
    const perCall = await load(
      16,
      () => post(`sequences/${sequenceName}/next`, {}).then(() => 1),
      () => sent,
    );
    const sequence = client.sequence(sequenceName);
    const blocks = await load(
      16,
      () => sequence.next().then(() => 1),
      () => sent,
    );

    const counterName = `bench-${Date.now()}`;
    let resolved = 0;
    const counted1 = (): number => {
      resolved++;
      return 1;
    };
    const totalIncrements = (): number => resolved;
    await client.counters.configure(counterName, { mode: 'hits', partitions: 4 });
    const perIncrement = await load(
      64,
      () => post(`counters/${counterName}/increment`, { by: 1 }).then(counted1),
      () => sent,
    );
    // The designs side by side: one request in flight per counter (the earlier client) and more;
    // a batch waiting for a free slot keeps growing in each.
    const designs = [1, 4].map((maxInFlight) => ({
      maxInFlight,
      client: new TallyhoClient({ baseUrl: api, fetch: counted, counters: { maxInFlight } }),
    }));
    const coalescedRuns: { maxInFlight: number; load: Load }[] = [];
    for (const d of designs) {
      coalescedRuns.push({
        maxInFlight: d.maxInFlight,
        load: await load(
          64,
          () => d.client.increment(counterName).then(counted1),
          () => sent,
        ),
      });
      await d.client.close();
    }
    const coalesced = coalescedRuns.find((r) => r.maxInFlight === 4)?.load as Load;
    // Exact counts: every increment that resolved is in the counter once (a consistent read).
    const stored = await client.counters.get(counterName, { consistent: true });
    const expected = totalIncrements();
    await client.close();

    // Stream appends: the same batcher, one request in flight per writer (seq order). Baseline: each
    // append its own request (each writer its own producer, so the seqs stay in order per producer).
    const eventType = `bench-${Date.now()}`;
    const seqs = Array.from({ length: 64 }, () => 0);
    let writer = 0;
    const perAppend = await load(
      64,
      () => {
        const w = writer++ % 64;
        seqs[w] = (seqs[w] ?? 0) + 1;
        return post(`streams/${eventType}/events`, { events: [{ producer: `bench-${w}`, seq: seqs[w], data: { w } }] }).then(() => 1);
      },
      () => sent,
    );
    const stream = client.stream(eventType, { producer: 'bench-client' });
    const appended = await load(
      64,
      () => stream.append({ n: 1 }).then(() => 1),
      () => sent,
    );
    await stream.close();

    const row = (scenario: string, l: Load): Row => ({
      scenario,
      'per second': rate(l),
      'requests per 1,000': (l.requests * 1000) / l.units,
    });
    const rows: Row[] = [
      row('sequences: one HTTP call per number (baseline)', perCall),
      row('sequences: client next() from reserved blocks', blocks),
      row('counters: one request per increment (baseline)', perIncrement),
      ...coalescedRuns.map((r) =>
        row(`counters: client increment(), coalesced, ${r.maxInFlight} in flight${r.maxInFlight === 4 ? ' (default)' : ''}`, r.load),
      ),
      row('streams: one request per append (baseline)', perAppend),
      row('streams: client append(), coalesced, 1 in flight', appended),
    ];
    table(
      `Through the client, ${windowMs / 1000} s windows after a ${warmupMs} ms warm-up (16 callers for numbers, 64 writers for increments and appends)`,
      rows,
    );
    console.log(`block size the client reached: ${fmt(sequence.stats().blockSize, 0)}`);
    ratio('sequences: client next() ÷ one call per number (numbers/s)', rate(blocks), rate(perCall), { atLeast: 50 });
    console.log(`counter value after the run: ${fmt(stored.value, 0)}; increments that resolved: ${fmt(expected, 0)}`);
    if (stored.value !== expected) throw new Error(`the counter holds ${stored.value}, not the ${expected} increments that resolved`);
    for (const r of coalescedRuns) {
      if (r.maxInFlight !== 4)
        ratio(`counters: ${r.maxInFlight} in flight ÷ one request per increment (increments/s)`, rate(r.load), rate(perIncrement));
    }
    ratio('counters: coalesced (default, 4 in flight) ÷ one request per increment (increments/s)', rate(coalesced), rate(perIncrement), {
      atLeast: 20,
    });
    ratio('streams: coalesced append() ÷ one request per append (events/s)', rate(appended), rate(perAppend), { atLeast: 20 });
  } finally {
    await devhost.stop();
    await azurite.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
