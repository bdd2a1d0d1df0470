/**
 * Jobs over HTTP against the host of the run, with the storage-queue triggers doing the work: a big
 * job completes with per-customer totals equal to an independent computation (10,000 transactions
 * on the real host; 2,000 on the devhost, which runs the same code paths and assertions for a fifth
 * of the suite's time, #25),
 * invalid transactions fail with their reasons, a big item round-trips through the claim check,
 * bad submissions get problem+json and store nothing. With the work triggers disabled (the host's
 * `AzureWebJobs.<fn>.Disabled` setting) real envelope messages are captured: one is delivered twice
 * and changes nothing; one whose claim check cannot be redeemed crashes every delivery, reaches
 * the poison queue, and its items end failed with the reason while the job completes.
 */
import { createHash } from 'node:crypto';

import { odata } from '@azure/data-tables';

import { jobIdForKey } from '../../shared/jobs/submit/jobIds';
import { Signer } from '../../shared/signing/signer';
import { containers, tables } from '../../shared/resources';
import { expectedTotals, invoiceTotals, type TestTransaction, transactions } from '../support/billing';
import { storageFor } from '../support/sequences';
import { until as untilCondition } from '../support/waits';
import type { StorageClients } from '../../shared/storage/clients';
import { atScale, ownHostTest, type E2eHost, startE2eHost, storageOf } from './support/harness';
import { type JobView, settledJob, queuesPolledPromptly } from './support/jobs';
import { expectProblem, requestJson } from './support/http';
import { unique } from './support/names';
import { readAll } from './support/pages';

interface ResultView {
  id: string;
  status: string;
  output?: Record<string, unknown>;
  code?: string;
  reason?: string;
  attempts: number;
  envelope: string;
  claimCheck: boolean;
  payloadSha256?: string;
  payloadBytes?: number;
}

const queueCount = 4;
const fastQueues = {
  ...queuesPolledPromptly,
  AzureFunctionsJobHost__extensions__queues__visibilityTimeout: '00:00:00',
  AzureFunctionsJobHost__extensions__queues__maxDequeueCount: '3',
  TALLYHO_JOBS_QUEUES: String(queueCount),
  TALLYHO_JOBS_RETRY_DELAY_SECONDS: '0',
};
const workQueues = (prefix: string): string[] => Array.from({ length: queueCount }, (_, i) => `${prefix}-${i}`);
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

describe('jobs over HTTP', () => {
  let storage: StorageClients;
  const prefix = unique('je');
  // Keyed job ids are MACs: the test can compute them only because it gives the host its key.
  const signingKey = Buffer.alloc(32, 0x33);
  let host: E2eHost;

  beforeAll(async () => {
    host = await startE2eHost({
      env: { ...fastQueues, TALLYHO_JOBS_QUEUE_PREFIX: prefix, TALLYHO_SIGNING_KEY: signingKey.toString('base64') },
    });
    // Only the own-host tests read it (an external host's storage is not this run's).
    if (!host.external) storage = storageFor(storageOf(host));
  });
  afterAll(async () => {
    await host?.dispose();
  });

  const submit = (h: E2eHost, body: unknown, headers?: Record<string, string>) =>
    requestJson<JobView>(h, 'POST', '/api/jobs', { body, ...(headers === undefined ? {} : { headers }) });
  const read = (h: E2eHost, id: string) => requestJson<JobView>(h, 'GET', `/api/jobs/${id}`);

  const allResults = (h: E2eHost, id: string, query = ''): Promise<ResultView[]> =>
    readAll<ResultView>(h, `/api/jobs/${id}/results${query}`);

  async function invoice(h: E2eHost, job: JobView): Promise<string> {
    const res = await requestJson<string>(h, 'GET', job.links.invoice ?? `/api/jobs/${job.id}/files/invoice.csv`);
    expect({ status: res.status, type: res.headers.get('content-type') }).toEqual({
      status: 200,
      type: expect.stringMatching(/^text\/csv/),
    });
    return res.body;
  }

  async function queueDepth(prefixes: readonly string[]): Promise<number> {
    let total = 0;
    for (const name of prefixes.flatMap((p) => workQueues(p).flatMap((q) => [q, `${q}-poison`]))) {
      total += (await (await storage.queue(name)).getProperties()).approximateMessagesCount ?? 0;
    }
    return total;
  }

  /** The job's lines in the `billing-invoices` stream log, after a flush, as CSV-like rows. */
  async function ledgerLines(h: E2eHost, id: string): Promise<string[]> {
    const flushed = await requestJson(h, 'POST', '/api/streams/billing-invoices/flush', { key: 'admin' });
    expect(flushed.status).toBe(200);
    const container = await storage.container('streams');
    const lines: string[] = [];
    for await (const blob of container.listBlobsFlat()) {
      if (!blob.name.includes('/billing-invoices/')) continue;
      const text = (await container.getBlobClient(blob.name).downloadToBuffer()).toString('utf8');
      for (const line of text.split('\n').filter((l) => l !== '')) {
        const event = JSON.parse(line) as { producer: string; data: Record<string, unknown> };
        if (event.producer !== `job-${id}-r0`) continue;
        const d = event.data;
        lines.push(
          [d.customerId, d.currency, d.exponent, d.transactions, d.netMinor, d.taxMinor, d.grossMinor, d.net, d.tax, d.gross].join(','),
        );
      }
    }
    return lines;
  }

  const invoiceRows = (csv: string): string[] =>
    csv
      .split('\r\n')
      .filter((l) => l !== '')
      .slice(1);

  const bigJob = atScale(10_000, 2_000);
  // Reads the ledger stream's blobs: the host's storage.
  ownHostTest(
    `a ${bigJob.toLocaleString('en')}-transaction job completes with per-customer totals equal to an independent computation`,
    async () => {
      const items = transactions(bigJob, 42);
      const started = Date.now();
      const accepted = await submit(host, { processor: 'billing', items });
      expect(accepted.status).toBe(202);
      expect(accepted.body).toMatchObject({ state: 'accepted', totals: { items: bigJob }, envelopes: { count: Math.ceil(bigJob / 32) } });
      expect(accepted.headers.get('location')).toBe(`/api/jobs/${accepted.body.id}`);
      const job = await settledJob(host, accepted.body.id, 110_000);
      const elapsedMs = Date.now() - started;
      expect(job).toMatchObject({
        state: 'completed',
        totals: { items: bigJob, succeeded: bigJob, failed: 0, pending: 0 },
        event: 'notConfigured',
      });
      expect(job.summary).toMatchObject({ transactions: bigJob, files: { invoice: 'invoice.csv' } });
      expect(invoiceTotals(await invoice(host, job))).toEqual(expectedTotals(items));
      const results = await allResults(host, job.id);
      expect(results).toHaveLength(bigJob);
      expect(new Set(results.map((r) => r.id)).size).toBe(bigJob);
      // The invoice lines also went to the ledger stream, once each, through its single writer.
      expect(job.delivery).toBe('delivered');
      expect(await ledgerLines(host, job.id)).toEqual(invoiceRows(await invoice(host, job)));
      console.log(`${bigJob} transactions: accepted to completed in ${job.timings.durationMs} ms (${elapsedMs} ms seen by the test)`);
    },
  );

  test('invalid transactions fail with their reasons; exactly those, and the job completes', async () => {
    const good = transactions(90, 7, 'ok');
    const bad: TestTransaction[] = [
      { ...good[0]!, id: 'bad-float', amountMinor: 19.99 },
      { ...good[1]!, id: 'bad-currency', currency: 'XBT' },
      { ...good[2]!, id: 'bad-category', taxCategory: 'luxury' },
      { ...good[3]!, id: 'bad-date', occurredAt: 'yesterday' },
    ];
    const accepted = await submit(host, { processor: 'billing', items: [...good, ...bad] });
    expect(accepted.status).toBe(202);
    const job = await settledJob(host, accepted.body.id);
    expect(job).toMatchObject({ state: 'completedWithFailures', totals: { succeeded: 90, failed: 4, pending: 0 } });
    const failures = await requestJson<{ items: { id: string; code: string; reason: string; attempts: number }[] }>(
      host,
      'GET',
      `/api/jobs/${job.id}/failures`,
    );
    expect(failures.body.items.map((f) => [f.id, f.code, f.attempts])).toEqual([
      ['bad-category', 'unknownTaxCategory', 1],
      ['bad-currency', 'invalid', 1],
      ['bad-date', 'invalid', 1],
      ['bad-float', 'invalid', 1],
    ]);
    const reasons = Object.fromEntries(failures.body.items.map((f) => [f.id, f.reason]));
    expect(reasons).toEqual({
      'bad-category': expect.stringMatching(/taxCategory: "luxury" is not in the rate table/),
      'bad-currency': expect.stringMatching(/currency: is not an accepted ISO 4217 currency code/),
      'bad-date': expect.stringMatching(/occurredAt/),
      'bad-float': expect.stringMatching(/amountMinor: must be an integer number of minor units/),
    });
    expect(invoiceTotals(await invoice(host, job))).toEqual(expectedTotals(good));
  });

  test('a big item round-trips through the claim check intact', async () => {
    const items = transactions(40, 9, 'cc');
    const big = {
      ...items[5]!,
      id: 'cc-big',
      metadata: { scan: 'é€𝄞'.repeat(20_000), lines: Array.from({ length: 500 }, (_, i) => ({ n: i })) },
    };
    items[5] = big;
    const accepted = await submit(host, { processor: 'billing', items });
    const job = await settledJob(host, accepted.body.id);
    expect(job).toMatchObject({ state: 'completed', totals: { succeeded: 40 } });
    const results = await allResults(host, job.id);
    const result = results.find((r) => r.id === 'cc-big');
    const line = JSON.stringify(big);
    expect(result).toMatchObject({
      status: 'succeeded',
      claimCheck: true,
      payloadSha256: sha256(line),
      payloadBytes: Buffer.byteLength(line),
    });
    expect(Buffer.byteLength(line)).toBeGreaterThan(64 * 1024);
    expect(results.filter((r) => r.claimCheck).map((r) => r.id)).toEqual(['cc-big']);
    expect(results.find((r) => r.id === items[0]!.id)?.payloadSha256).toBe(sha256(JSON.stringify(items[0])));
    expect(invoiceTotals(await invoice(host, job))).toEqual(expectedTotals(items));
  });

  test('an Idempotency-Key returns the same job on resubmission; other items under the key are a 409', async () => {
    const items = transactions(50, 13, 'idem');
    const key = unique('order-batch');
    const first = await submit(host, { processor: 'billing', items }, { 'Idempotency-Key': key });
    const again = await submit(host, { processor: 'billing', items }, { 'Idempotency-Key': key });
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.body.id).toBe(first.body.id);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const job = await settledJob(host, first.body.id);
    expect(job.totals).toEqual({ items: 50, succeeded: 50, failed: 0, cancelled: 0, pending: 0 });
    const conflict = expectProblem(
      await submit(host, { processor: 'billing', items: items.slice(1) }, { 'Idempotency-Key': key }),
      409,
      'Conflict',
    );
    // finding 7: the 409 does not name the job a guessed key would lead to.
    expect(JSON.stringify(conflict)).not.toContain(first.body.id);
    expect((await submit(host, { processor: 'billing', items }, { 'Idempotency-Key': key })).body).toMatchObject({
      id: job.id,
      state: 'completed',
    });
  });

  ownHostTest('bad submissions get 400/413 problem+json and store nothing: no job row, no queue message, no blob', async () => {
    const jobsTable = await storage.table(tables.jobs);
    const container = await storage.container(containers.jobs);
    // The jobs table and container are shared with suites running in parallel (schedules submit jobs),
    // so only what this test's submissions could write is looked at. Each carries an Idempotency-Key
    // the test chose, which fixes the job id every row (PartitionKey or RowKey) and blob (name prefix)
    // of the job would carry. That narrows nothing: every check runs before the job id is chosen,
    // with or without a key. The work queues are this suite's own.
    const keys: string[] = [];
    const keyed = (headers?: Record<string, string>): Record<string, string> => {
      const key = headers?.['Idempotency-Key'] ?? unique('bad-submission');
      keys.push(key);
      return { 'Idempotency-Key': key, ...headers };
    };
    const snapshot = async () => {
      const rows: string[] = [];
      const blobs: string[] = [];
      // The submitter is the function key's caller (`key:shared`): keyed ids are per owner.
      for (const id of keys.map((k) => jobIdForKey(k, new Signer(signingKey), 'caller', 'key:shared'))) {
        for await (const row of jobsTable.listEntities({ queryOptions: { filter: odata`PartitionKey eq ${id} or RowKey eq ${id}` } })) {
          rows.push(`${row.partitionKey}/${row.rowKey}`);
        }
        for await (const blob of container.listBlobsFlat({ prefix: `${id}/` })) blobs.push(blob.name);
      }
      return { rows, blobs, messages: await queueDepth([prefix]) };
    };
    const messagesBefore = await queueDepth([prefix]);
    const tx = transactions(3, 5, 'bad');
    const cases: [string, unknown, Record<string, string> | undefined, number, string][] = [
      ['malformed JSON', '{"processor": "billing", "items": [', undefined, 400, 'ValidationFailed'],
      ['no body', '', undefined, 400, 'ValidationFailed'],
      ['an unknown processor', { processor: 'payroll', items: tx }, undefined, 400, 'ValidationFailed'],
      ['items not an array', { processor: 'billing', items: { a: 1 } }, undefined, 400, 'ValidationFailed'],
      ['no items', { processor: 'billing', items: [] }, undefined, 400, 'ValidationFailed'],
      ['an item without an id', { processor: 'billing', items: [{ ...tx[0], id: undefined }] }, undefined, 400, 'ValidationFailed'],
      ['an item id with a slash', { processor: 'billing', items: [{ ...tx[0], id: 'a/b' }] }, undefined, 400, 'ValidationFailed'],
      ['duplicate item ids', { processor: 'billing', items: [tx[0], tx[1], tx[0]] }, undefined, 400, 'ValidationFailed'],
      ['an unknown field', { processor: 'billing', items: tx, priority: 'high' }, undefined, 400, 'ValidationFailed'],
      ['a bad Idempotency-Key', { processor: 'billing', items: tx }, { 'Idempotency-Key': 'has space' }, 400, 'ValidationFailed'],
      [
        'more items than TALLYHO_JOBS_MAX_ITEMS',
        { processor: 'billing', items: transactions(10_001, 3, 'many') },
        undefined,
        413,
        'PayloadTooLarge',
      ],
      [
        'an item above TALLYHO_JOBS_MAX_ITEM_BYTES',
        { processor: 'billing', items: [{ ...tx[0], metadata: { x: 'y'.repeat(300_000) } }] },
        undefined,
        413,
        'PayloadTooLarge',
      ],
      [
        'a body above TALLYHO_JOBS_MAX_REQUEST_BYTES',
        { processor: 'billing', items: tx, pad: 'z'.repeat(4 * 1024 * 1024) },
        undefined,
        413,
        'PayloadTooLarge',
      ],
    ];
    for (const [name, body, headers, status, code] of cases) {
      const res = await submit(host, body, keyed(headers));
      const problem = expectProblem(res, status, code);
      expect({ name, detail: typeof problem.detail }).toEqual({ name, detail: 'string' });
    }
    const duplicate = expectProblem(await submit(host, { processor: 'billing', items: [tx[0], tx[1], tx[0]] }, keyed()), 400);
    expect(duplicate.issues).toEqual([{ path: 'body.items.2.id', message: expect.stringContaining('items.0') }]);
    expect(keys).toHaveLength(cases.length + 1);
    expect(await snapshot()).toEqual({ rows: [], blobs: [], messages: messagesBefore });
  });

  test('unknown jobs and bad ids answer 404 and 400', async () => {
    expectProblem(await read(host, '20260101000000-0000000000'), 404, 'NotFound');
    expectProblem(await read(host, 'NOT_AN_ID'), 400, 'ValidationFailed');
    expectProblem(await requestJson(host, 'POST', '/api/jobs/20260101000000-0000000000/retry-failed', { key: 'admin' }), 404, 'NotFound');
  });

  describe('captured envelopes (work triggers disabled, then enabled)', () => {
    const capturePrefix = unique('jc');
    const disabled = Object.fromEntries(Array.from({ length: queueCount }, (_, i) => [`AzureWebJobs.jobsWork${i}.Disabled`, 'true']));
    const env = { ...fastQueues, TALLYHO_JOBS_QUEUE_PREFIX: capturePrefix };
    interface Captured {
      queue: string;
      text: string;
      decoded: { j: string; e: string; i: { id: string; c?: unknown }[] };
    }

    async function captured(): Promise<Captured[]> {
      const out: Captured[] = [];
      for (const queue of workQueues(capturePrefix)) {
        const peeked = await (await storage.queue(queue)).peekMessages({ numberOfMessages: 32 });
        for (const m of peeked.peekedMessageItems) {
          out.push({
            queue,
            text: m.messageText,
            // A sealed envelope: `{"s": MAC, "m": envelope}` (shared/jobs/envelopes/seal.ts, the wire form in wire.ts).
            decoded: (JSON.parse(Buffer.from(m.messageText, 'base64').toString('utf8')) as { m: Captured['decoded'] }).m,
          });
        }
      }
      return out;
    }

    ownHostTest(
      'the same envelope delivered twice leaves totals unchanged; an envelope that always crashes reaches poison, its items fail with the reason, the job completes',
      async () => {
        // 1. Submit with the work triggers off and capture the real messages.
        const holding = await startE2eHost({ storage: host.storage, env: { ...env, ...disabled } });
        const dupItems = transactions(100, 17, 'dup');
        const poisonItems = transactions(70, 19, 'pz');
        poisonItems[40] = { ...poisonItems[40]!, id: 'pz-big', metadata: { blob: 'b'.repeat(40_000) } };
        let dupJob: JobView;
        let poisonJob: JobView;
        try {
          dupJob = (await submit(holding, { processor: 'billing', items: dupItems })).body;
          poisonJob = (await submit(holding, { processor: 'billing', items: poisonItems })).body;
        } finally {
          await holding.stop();
        }
        const messages = await captured();
        const dupEnvelopes = messages.filter((m) => m.decoded.j === dupJob.id);
        expect(dupEnvelopes).toHaveLength(4);
        const copy = dupEnvelopes[1]!;
        // A second copy of a real envelope waits next to the original.
        await (await storage.queue(copy.queue)).sendMessage(copy.text);
        // The poison job's input blob goes missing: its claim check cannot be redeemed, every delivery crashes.
        const crashing = messages.find((m) => m.decoded.j === poisonJob.id && m.decoded.i.some((e) => e.c !== undefined));
        expect(crashing?.decoded.i.map((e) => e.id)).toContain('pz-big');
        const container = await storage.container(containers.jobs);
        for await (const blob of container.listBlobsFlat({ prefix: `${poisonJob.id}/input` })) await container.deleteBlob(blob.name);

        // 2. A host with the triggers on processes everything.
        const working = await startE2eHost({ storage: host.storage, env });
        try {
          const dup = await settledJob(working, dupJob.id);
          expect(dup).toMatchObject({ state: 'completed', totals: { succeeded: 100, failed: 0, pending: 0 } });
          const dupInvoice = await invoice(working, dup);
          expect(invoiceTotals(dupInvoice)).toEqual(expectedTotals(dupItems));

          const poisoned = await settledJob(working, poisonJob.id);
          const crashedIds = (crashing?.decoded.i ?? []).map((e) => e.id).sort();
          expect(poisoned).toMatchObject({
            state: 'completedWithFailures',
            totals: { succeeded: 70 - crashedIds.length, failed: crashedIds.length, pending: 0 },
          });
          const failures = await allResults(working, poisonJob.id, '?status=failed');
          expect(failures.map((f) => f.id).sort()).toEqual(crashedIds);
          for (const f of failures) {
            expect(f).toMatchObject({
              code: 'poisoned',
              reason: expect.stringMatching(
                /failed 4 deliveries and reached .*-r-\d-poison; last error: Claim check cannot be redeemed: blob .* does not exist/,
              ),
            });
          }
          expect(invoiceTotals(await invoice(working, poisoned))).toEqual(
            expectedTotals(poisonItems.filter((t) => !crashedIds.includes(t.id))),
          );

          // 3. Deliver the copy once more after completion: nothing changes.
          await (await storage.queue(copy.queue)).sendMessage(copy.text);
          await untilCondition('the copy to be processed', async () => ((await queueDepth([capturePrefix])) > 0 ? undefined : true), {
            everyMs: 200,
            report: () => working.output().slice(-3000),
          });
          const after = (await read(working, dup.id)).body;
          expect(after).toEqual(dup);
          expect(await invoice(working, after)).toBe(dupInvoice);
          expect(await allResults(working, dup.id)).toHaveLength(100);
        } finally {
          await working.stop();
        }
      },
    );
  });
});
