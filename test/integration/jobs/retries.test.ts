/**
 * Failures on Azurite: retryable item failures go back in smaller envelopes with their attempt
 * count and succeed or end failed with the reason after TALLYHO_JOBS_MAX_ATTEMPTS; an envelope that
 * fails every delivery ends in the poison queue and its items fail with the recorded reason; a job
 * that completed with failures runs them again with retry-failed, with exact counts and a new event.
 */
import type { JsonObject } from '../../../shared/jobs/envelopes/envelope';
import { openEnvelope } from '../../../shared/jobs/envelopes/seal';
import type { ItemOutcome, JobProcessor } from '../../../shared/jobs/processors/processor';
import { type MemoryLogger } from '../../../shared/log';
import { expectedTotals, invoiceTotals, transactions } from '../../support/billing';
import { jobHarness, testSigner } from '../../support/jobs';
import { codeOf } from '../../support/appErrors';

/** A processor whose behaviour per item and attempt the test decides. */
function scripted(decide: (item: JsonObject, attempt: number) => ItemOutcome | 'throw'): JobProcessor {
  return {
    name: 'scripted',
    processItem: (item, { attempt }) => {
      const outcome = decide(item, attempt);
      return outcome === 'throw' ? Promise.reject(new Error(`boom on ${JSON.stringify(item.id)}`)) : Promise.resolve(outcome);
    },
    async finalize(context) {
      let n = 0;
      for await (const _ of context.outputs()) n++;
      return { files: { count: await context.writeFile('count.txt', 'text/plain', String(n)) }, outputs: n };
    },
  };
}

const items = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `it-${String(i).padStart(3, '0')}`, n: i }));
const ok = (item: JsonObject): ItemOutcome => ({ ok: true, output: { n: item.n ?? null } });

describe('job failures and retries on Azurite', () => {
  it('retries items that fail transiently in a smaller envelope; they succeed on a later attempt', async () => {
    const processor = scripted((item, attempt) =>
      Number(item.n) % 10 === 7 && attempt < 3 ? { ok: false, code: 'busy', reason: 'downstream busy', retryable: true } : ok(item),
    );
    const h = jobHarness({ processors: [processor], settings: { queues: 1 } });
    // Reads what each delivery carried; the harness's drain delivers through h.service.
    const deliveries = jest.spyOn(h.jobs.work, 'onMessage');
    const { job } = await h.jobs.submissions.submit({ processor: 'scripted', items: items(100) }, undefined);
    const report = await h.drain();
    expect(report).toMatchObject({ failures: 0, poisoned: 0 });
    // 4 envelopes, their retries at attempt 2 and 3.
    expect(report.delivered).toBe(4 + 4 + 4);
    const envelopes = new Map(
      deliveries.mock.calls.map(([text]) => {
        const opened = openEnvelope(text, testSigner);
        if (!opened.ok) throw new Error(`not an envelope: ${text}`);
        const { envelope } = opened;
        return [envelope.envelopeId, envelope.items.map((item) => ({ id: item.id, attempt: item.attempt }))] as const;
      }),
    );
    const failing = (id: string): boolean => Number(id.slice(3)) % 10 === 7;
    const firsts = [...envelopes.keys()].filter((e) => !e.includes('~')).sort();
    expect(firsts).toHaveLength(4);
    // Each retry envelope holds exactly the items of its parent that failed, at the next attempt; nothing else.
    const expectedRetries = firsts.flatMap((e) =>
      [2, 3].map((attempt) => ({
        envelope: `${e}~${attempt}`,
        items: (envelopes.get(e) ?? []).filter((entry) => failing(entry.id)).map((entry) => ({ id: entry.id, attempt })),
      })),
    );
    const retries = [...envelopes].filter(([e]) => e.includes('~')).map(([envelope, entries]) => ({ envelope, items: entries }));
    const byEnvelope = (a: { envelope: string }, b: { envelope: string }): number => a.envelope.localeCompare(b.envelope);
    expect(retries.sort(byEnvelope)).toEqual(expectedRetries.sort(byEnvelope));
    expect(retries.flatMap((r) => r.items)).toHaveLength(20);
    expect(await h.jobs.reads.view(job.id)).toMatchObject({
      state: 'completed',
      totals: { succeeded: 100, failed: 0 },
      summary: { outputs: 100 },
    });
    const retried = (await h.jobs.reads.results(job.id, 'results', undefined, { maxPageSize: 1000 })).items.filter((r) => r.attempts > 1);
    expect(retried.map((r) => r.id)).toEqual(
      items(100)
        .filter((i) => i.n % 10 === 7)
        .map((i) => i.id),
    );
    expect(retried.every((r) => r.attempts === 3 && /~3$/.test(r.envelope))).toBe(true);
  });

  it('records an item that keeps failing after TALLYHO_JOBS_MAX_ATTEMPTS, with the reason and the attempts; a throwing processor counts as transient', async () => {
    const processor = scripted((item) =>
      item.n === 3 ? 'throw' : item.n === 4 ? { ok: false, code: 'rejected', reason: 'no such account', retryable: false } : ok(item),
    );
    const h = jobHarness({ processors: [processor], settings: { queues: 1, maxAttempts: 3 } });
    const { job } = await h.jobs.submissions.submit({ processor: 'scripted', items: items(10) }, undefined);
    await h.drain();
    expect(await h.jobs.reads.view(job.id)).toMatchObject({ state: 'completedWithFailures', totals: { succeeded: 8, failed: 2 } });
    const failures = (await h.jobs.reads.results(job.id, 'failures', 'failed', { maxPageSize: 10 })).items;
    expect(failures.map((f) => [f.id, f.code, f.reason, f.attempts])).toEqual([
      ['it-003', 'error', 'boom on "it-003" (gave up after 3 attempts)', 3],
      ['it-004', 'rejected', 'no such account', 1],
    ]);
  });

  it('an envelope that fails every delivery reaches poison; its items fail with the recorded reason and the job completes', async () => {
    const h = jobHarness({ settings: { queues: 1 } });
    const list = transactions(50, 41, 'p');
    list[45] = { ...list[45]!, metadata: { big: 'x'.repeat(20_000) } };
    const { job } = await h.jobs.submissions.submit({ processor: 'billing', items: list }, undefined);
    const container = await h.container();
    for (const name of await h.blobs()) if (name.includes('/input-')) await container.deleteBlob(name);
    const deliveries = jest.spyOn(h.jobs.work, 'onMessage');
    const report = await h.drain({ maxDequeueCount: 2 });
    // Its first failure moves it from the work queue to the retry lane; there it fails maxDequeueCount (2) deliveries.
    expect(report).toMatchObject({ failures: 2, poisoned: 1 });
    const answers = await Promise.allSettled(deliveries.mock.results.map((r) => r.value as Promise<unknown>));
    expect(answers.filter((a) => a.status === 'fulfilled' && 'movedTo' in (a.value as object))).toEqual([
      { status: 'fulfilled', value: expect.objectContaining({ movedTo: h.laneNames[0] }) },
    ]);
    expect(answers.filter((a) => a.status === 'rejected')).toHaveLength(2);
    const view = await h.jobs.reads.view(job.id);
    // Envelope 0 (items 0-31) is inline and succeeds; envelope 1 (32-49, one claim check) is poisoned.
    expect(view).toMatchObject({ state: 'completedWithFailures', totals: { succeeded: 32, failed: 18, pending: 0 } });
    const failures = (await h.jobs.reads.results(job.id, 'failures', 'failed', { maxPageSize: 100 })).items;
    expect(failures.map((f) => f.id)).toEqual(list.slice(32).map((t) => t.id));
    for (const f of failures) {
      expect(f).toMatchObject({
        code: 'poisoned',
        reason: expect.stringMatching(
          /^The envelope failed 3 deliveries and reached .*-r-0-poison; last error: Claim check cannot be redeemed: blob .*input-.* does not exist$/,
        ),
      });
    }
    expect(invoiceTotals((await h.jobs.reads.file(job.id, 'invoice.csv')).body.toString())).toEqual(expectedTotals(list.slice(0, 32)));
  });

  it('a poison message that is not an envelope is logged, not retried forever', async () => {
    const h = jobHarness();
    expect(await h.jobs.work.onPoison('not json', 'q-poison')).toMatchObject({ job: undefined, failed: 0 });
    expect((h.logger as MemoryLogger).events('jobs.poison_unreadable')).toHaveLength(1);
  });

  it('retry-failed runs the failed items again as a new round: exact counts, fresh attempts, a second event', async () => {
    const broken = new Set(['it-002', 'it-040', 'it-041']);
    const processor = scripted((item) =>
      broken.has(item.id as string) ? { ok: false, code: 'down', reason: 'ledger offline', retryable: false } : ok(item),
    );
    const h = jobHarness({ processors: [processor], settings: { queues: 2 } });
    const { job } = await h.jobs.submissions.submit({ processor: 'scripted', items: items(60) }, undefined);
    expect(await codeOf(h.jobs.submissions.retryFailed(job.id))).toBe('Conflict');
    await h.drain();
    expect(await h.jobs.reads.view(job.id)).toMatchObject({
      state: 'completedWithFailures',
      round: 0,
      totals: { succeeded: 57, failed: 3 },
    });

    broken.delete('it-040');
    broken.delete('it-041');
    const retried = await h.jobs.submissions.retryFailed(job.id);
    expect(retried).toMatchObject({ round: 1, roundItems: 3, phase: 'enqueued', envelopes: 1 });
    expect(await h.jobs.reads.view(job.id)).toMatchObject({ state: 'running', totals: { succeeded: 57, failed: 0, pending: 3 } });
    expect(await codeOf(h.jobs.submissions.retryFailed(job.id))).toBe('Conflict');
    await h.drain();
    expect(await h.jobs.reads.view(job.id)).toMatchObject({
      state: 'completedWithFailures',
      round: 1,
      totals: { succeeded: 59, failed: 1, pending: 0 },
      summary: { outputs: 59 },
    });
    const reRun = (await h.jobs.reads.results(job.id, 'results', undefined, { maxPageSize: 100 })).items.filter((r) => r.round === 1);
    expect(reRun.map((r) => [r.id, r.status, r.attempts])).toEqual([
      ['it-002', 'failed', 1],
      ['it-040', 'succeeded', 1],
      ['it-041', 'succeeded', 1],
    ]);

    broken.clear();
    await h.jobs.submissions.retryFailed(job.id);
    await h.drain();
    expect(await h.jobs.reads.view(job.id)).toMatchObject({ state: 'completed', round: 2, totals: { succeeded: 60, failed: 0 } });
    expect(h.events.sent.map((m) => m.messageId)).toEqual([`${job.id}:0:completed`, `${job.id}:1:completed`, `${job.id}:2:completed`]);
    expect(await h.stores.results.progress(job.id)).toMatchObject({ succeeded: 60, failed: 0 });
    expect(await codeOf(h.jobs.submissions.retryFailed(job.id))).toBe('Conflict');
  });
});
