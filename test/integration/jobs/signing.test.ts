/**
 * The job processor acts only on envelopes this app sealed (finding 3), keyed job ids cannot be
 * computed without the app's key (finding 7), and the key the app creates for itself when
 * TALLYHO_SIGNING_KEY is unset is one key for every instance. All on Azurite.
 */
import { createHash } from 'node:crypto';

import { isAppError, toProblem } from '../../../shared/errors';
import { jobIdForKey } from '../../../shared/jobs/submit/jobIds';
import { envelopeJson, wireSchema } from '../../../shared/jobs/envelopes/wire';
import type { JobProcessor } from '../../../shared/jobs/processors/processor';
import { openEnvelope, sealEnvelope } from '../../../shared/jobs/envelopes/seal';
import { containerKeyBlob, loadOrCreateKey } from '../../../shared/signing/keyStore';
import { Signer } from '../../../shared/signing/signer';
import { codeOf } from '../../support/appErrors';
import { expectedTotals, invoiceTotals, transactions } from '../../support/billing';
import { jobHarness, testSigner } from '../../support/jobs';

const results = async (h: ReturnType<typeof jobHarness>) => (await h.rows('results')).filter((r) => String(r.rowKey).startsWith('r|'));

describe('job results from envelopes the app did not seal', () => {
  it('an unsigned, foreign-key or altered envelope is rejected before any work, also by the poison handler; the honest run is unchanged', async () => {
    const h = jobHarness({ settings: { queues: 1 } });
    const items = transactions(40, 21, 'victim');
    const { job } = await h.jobs.submissions.submit({ processor: 'billing', items }, undefined);
    const [queued] = (await h.messages()).get(h.queueNames[0]!) ?? [];
    const real = openEnvelope(queued!, testSigner);
    if (!real.ok) throw new Error(`the app's own envelope does not open: ${real.reason}`);
    // Invented amounts for the victim's items, as the attacker would send them.
    const forgedEnvelope = {
      ...real.envelope,
      items: real.envelope.items.map((e) => ('data' in e ? { ...e, data: { ...e.data, amountMinor: 1 } } : e)),
    };
    const attacker = new Signer(Buffer.alloc(32, 0x01));
    const sealed = JSON.parse(queued!) as { s: string; m: unknown };
    const forgeries: [string, string][] = [
      ['unsigned', envelopeJson(forgedEnvelope)],
      ['sealed with another key', sealEnvelope(forgedEnvelope, attacker)],
      ['altered after sealing', JSON.stringify({ s: sealed.s, m: JSON.parse(envelopeJson(forgedEnvelope)) as unknown })],
      ['a seal with extra members', JSON.stringify({ ...sealed, x: 1 })],
    ];
    for (const [label, text] of forgeries) {
      expect({ label, code: await codeOf(h.jobs.work.process(text, { dequeueCount: 1 })) }).toEqual({
        label,
        code: 'ValidationFailed',
      });
      // At the trigger's boundary such a message ends on its first delivery, with why, instead of going round until poison.
      expect({ label, ...(await h.jobs.work.onMessage(text, { dequeueCount: 1 })) }).toEqual({
        label,
        refused: expect.stringContaining('not a job envelope of this app') as string,
      });
      const poison = await h.jobs.work.onPoison(text, `${h.queueNames[0]!}-poison`);
      expect({ label, job: poison.job, failed: poison.failed }).toEqual({ label, job: undefined, failed: 0 });
    }
    expect(await results(h)).toEqual([]);

    const report = await h.drain();
    expect(report).toMatchObject({ failures: 0, poisoned: 0 });
    expect(await h.jobs.reads.view(job.id)).toMatchObject({ state: 'completed', totals: { items: 40, succeeded: 40, failed: 0 } });
    expect(invoiceTotals((await h.jobs.reads.file(job.id, 'invoice.csv')).body.toString('utf8'))).toEqual(expectedTotals(items));
  });

  it('every envelope the app sends is sealed: submissions and the smaller retry envelopes', async () => {
    // Every other item fails once with a retryable reason, so retry envelopes are sent.
    const flaky: JobProcessor = {
      name: 'flaky',
      processItem: (item, { attempt }) =>
        Promise.resolve(
          Number(typeof item.id === 'string' ? item.id.slice(2) : 0) % 2 === 0 && attempt === 1
            ? { ok: false, code: 'busy', reason: 'busy', retryable: true }
            : { ok: true, output: {} },
        ),
      finalize: () => Promise.resolve({ files: {}, outputs: 0 }),
    };
    const h = jobHarness({ processors: [flaky], settings: { queues: 1 } });
    const deliveries = jest.spyOn(h.jobs.work, 'onMessage');
    await h.jobs.submissions.submit({ processor: 'flaky', items: Array.from({ length: 50 }, (_, i) => ({ id: `f-${i}` })) }, undefined);
    await h.drain();
    const texts = deliveries.mock.calls.map(([text]) => text);
    expect(texts.some((t) => openEnvelope(t, testSigner).ok && JSON.stringify(JSON.parse(t)).includes('~2'))).toBe(true);
    for (const text of texts) {
      expect(openEnvelope(text, testSigner).ok).toBe(true);
      // Sealed: the message itself is no bare envelope a processor would take.
      expect(wireSchema.safeParse(JSON.parse(text)).success).toBe(false);
    }
  });
});

describe('keyed job ids cannot be computed without the app key', () => {
  it('the id is a MAC of the key: not the old sha256 form, different under another app key', () => {
    const key = 'invoices-2026-03';
    const id = jobIdForKey(key, testSigner);
    expect(id).toMatch(/^k-[0-9a-f]{32}$/);
    expect(id).not.toBe(`k-${createHash('sha256').update(`jobs\n${key}`).digest('hex').slice(0, 32)}`);
    expect(jobIdForKey(key, new Signer(Buffer.alloc(32, 0x02)))).not.toBe(id);
    expect(jobIdForKey(key, testSigner)).toBe(id);
  });

  it('a resubmission of other items under a key is a 409 that does not name the job', async () => {
    const h = jobHarness();
    const items = transactions(5, 3, 'k7');
    const { job } = await h.jobs.submissions.submit({ processor: 'billing', items }, 'guessable-key-1');
    expect(job.id).toBe(jobIdForKey('guessable-key-1', testSigner));
    const err: unknown = await h.jobs.submissions
      .submit({ processor: 'billing', items: items.slice(1) }, 'guessable-key-1')
      .catch((e: unknown) => e);
    if (!isAppError(err)) throw new Error('expected a 409');
    expect(err.code).toBe('Conflict');
    expect(JSON.stringify(toProblem(err, '/api/jobs'))).not.toContain(job.id);
  });
});

describe('the signing key kept in storage when TALLYHO_SIGNING_KEY is unset', () => {
  it('instances starting together all get the one key that was stored first; later loads read it back', async () => {
    const h = jobHarness();
    const store = containerKeyBlob(() => h.container());
    let n = 0;
    const keys = await Promise.all(Array.from({ length: 5 }, () => loadOrCreateKey(store, () => Buffer.alloc(32, ++n))));
    const distinct = new Set(keys.map((k) => k.toString('hex')));
    expect(distinct.size).toBe(1);
    expect(keys[0]!.length).toBe(32);
    expect((await loadOrCreateKey(store, () => Buffer.alloc(32, 0xee))).equals(keys[0]!)).toBe(true);
  });
});
