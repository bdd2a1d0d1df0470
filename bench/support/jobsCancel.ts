/**
 * Cancel of a big job while workers lease it (issue #37): a 10,000-item job of an external processor,
 * four worker loops leasing and completing batches of 50; after the first batches, DELETE the job.
 * Reports the DELETE's answer time (target ≤ 1 s), the time from the DELETE to the last lease of the
 * job handed out (none may be handed out after its answer), and the time until the job is
 * `cancelled` (its items written in the background) — which is what the DELETE waited for before the
 * cancel was asynchronous, so it is the baseline of the ratio. On the host `startBenchHost` chooses
 * (`--real-host` for the real Functions host), named in the output.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';

import { caller, loadNow, startJobsBenchHost } from './jobsBenchHost';
import { fmt, ratio, table } from './report';

const items = Number(process.env.BENCH_JOBS_CANCEL_ITEMS ?? 10_000);
const workers = 4;
const batchSize = 50;
/** Batches leased before the cancel is sent: workers are mid-job when it arrives. */
const leasesBeforeCancel = 20;

export async function cancelBench(): Promise<void> {
  const host = await startJobsBenchHost('cancel', 250);
  const call = caller(host);
  try {
    const processor = `cancel-${randomBytes(3).toString('hex')}`;
    await call('PUT', `/api/processors/${processor}`, { type: 'external', batchSize, leaseSeconds: 60, maxAttempts: 3 }, true);
    const payload = Array.from({ length: items }, (_, i) => ({ id: `it-${i}` }));
    const submitted = await call('POST', '/api/jobs', { processor, items: payload });
    if (submitted.status !== 202) throw new Error(`submit answered ${submitted.status}`);
    const jobId = submitted.body.id as string;

    let leased = 0;
    let stop = false;
    let cancelSentAt = Infinity;
    let cancelAnsweredAt = Infinity;
    const grantedAfterSend: number[] = [];
    let afterAnswer = 0;
    let cancelStarted: (() => void) | undefined;
    const enoughLeased = new Promise<void>((resolve) => (cancelStarted = resolve));
    const loop = async (): Promise<void> => {
      while (!stop) {
        const lease = await call('POST', `/api/processors/${processor}/leases`, { wait: 1 });
        const at = performance.now();
        if (lease.status !== 200) continue;
        if (++leased >= leasesBeforeCancel) cancelStarted?.();
        if (at > cancelSentAt) grantedAfterSend.push(at - cancelSentAt);
        // A lease answered after the DELETE's answer was already in hand: the rule says none.
        if (at > cancelAnsweredAt) afterAnswer++;
        const done = lease.body.items as { id: string }[];
        await call('POST', `/api/leases/${lease.body.leaseId as string}/complete`, {
          results: done.map((i) => ({ id: i.id, status: 'succeeded' })),
        });
      }
    };
    const loops = Array.from({ length: workers }, loop);
    await enoughLeased;
    cancelSentAt = performance.now();
    const cancel = await call('DELETE', `/api/jobs/${jobId}`);
    cancelAnsweredAt = performance.now();
    if (cancel.status !== 202) throw new Error(`DELETE answered ${cancel.status}: ${JSON.stringify(cancel.body)}`);
    let cancelledAt = 0;
    for (;;) {
      const view = await call('GET', `/api/jobs/${jobId}`);
      if (view.body.state === 'cancelled') {
        cancelledAt = performance.now();
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    stop = true;
    await Promise.all(loops);
    const answerMs = cancelAnsweredAt - cancelSentAt;
    const lastLeaseMs = grantedAfterSend.length === 0 ? 0 : Math.max(...grantedAfterSend);
    table(`Cancel of a ${items}-item job while ${workers} workers lease it (${host.kind}, load ${loadNow()})`, [
      {
        'DELETE answer (ms)': fmt(answerMs),
        'answer state': String(cancel.body.state),
        'last lease of the job after the DELETE was sent (ms)': fmt(lastLeaseMs),
        'leases answered after the DELETE answered': afterAnswer,
        'until cancelled: items written in the background (ms)': fmt(cancelledAt - cancelSentAt),
        'batches leased before': leased - grantedAfterSend.length,
      },
    ]);
    console.log(`(${host.kind}: the DELETE answers once the job is cancelling; leases of it are refused from that write on)`);
    ratio(
      `cancel answer time / time until cancelled (what the synchronous DELETE waited for), ${host.kind}`,
      answerMs,
      cancelledAt - cancelSentAt,
    );
    ratio(`cancel answer time vs the 1 s target, ${host.kind}`, answerMs, 1000, { atMost: 1 });
  } finally {
    await host.stop();
  }
}
