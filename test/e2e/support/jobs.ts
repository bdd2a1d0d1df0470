/** Jobs over HTTP for the e2e tests: a job's view, waiting until it has settled, and prompt queue polling. */
import { until } from '../../support/waits';
import type { E2eHost } from './harness';
import { pollJson } from './http';

/**
 * Host settings under which queued work (job envelopes, gate and schedule actions) is picked up within
 * a second: the queue listener's back-off otherwise grows to host.json's 5 s when idle. Not faster:
 * every idle poll of every queue costs CPU in the host and in Azurite, and the suite is CPU-bound.
 * Measured on an idle app (keys on, CPU of the host's processes and its Azurite over 60 s, 2 × AMD
 * EPYC beside a soak run): the real host 4.2 s at host.json's 5 s, 7.9 s at 1 s, 19.2 s at 200 ms;
 * the devhost 2.6 s at 5 s, 16.0 s at 200 ms.
 *
 * The app's four work queues stay: one would poll 6 queue triggers instead of 18 (each work queue
 * brings a retry lane and a poison queue), and idle that saves CPU (2026-12-01, 2 × Intel Xeon: an idle
 * real host cost the machine 97–121 ms/s with one, 169–172 with four), but the tests that wait on
 * queued work then drain through one trigger: four real-host files (gates, securityProbe, limits,
 * realHost), interleaved A/B pairs, cost 2.5% more CPU with one queue (130.2 against 127.0 s, medians
 * of two pairs) and 1% more time.
 */
export const queuesPolledPromptly = { AzureFunctionsJobHost__extensions__queues__maxPollingInterval: '00:00:01' } as const;

/**
 * The lease of a processor whose batch a test holds while it reads figures, pages or spans: an hour,
 * since the default minute can run out on a busy machine before the reads are done.
 */
export const heldLeaseSeconds = 3600;

export interface JobView {
  id: string;
  state: string;
  delivery: string;
  round: number;
  totals: { items: number; succeeded: number; failed: number; pending: number };
  envelopes: { count: number; sent: number };
  timings: Record<string, string | number | null>;
  summary: Record<string, unknown> | null;
  event: string;
  links: Record<string, string>;
}

/**
 * The job once it has finished and settled: completed (with or without failures), its invoice
 * lines delivered and its event handled. Given up (its test ended first), it reports the job's last
 * view and the host's recent output. `_budgetMs` is ignored, kept so older callers compile.
 */
export async function settledJob(host: E2eHost, id: string, _budgetMs?: number): Promise<JobView> {
  let last: unknown;
  return until(
    `job ${id} to settle`,
    async () => {
      const res = await pollJson<JobView>(host, `/api/jobs/${id}`);
      if (res.status !== 200) throw new Error(`GET job ${id}: ${res.status} ${JSON.stringify(res.body)}`);
      last = res.body;
      const done = res.body.state === 'completed' || res.body.state === 'completedWithFailures';
      return done && res.body.delivery !== 'pending' && res.body.event !== 'pending' ? res.body : undefined;
    },
    { everyMs: 200, report: () => `The job's last view: ${JSON.stringify(last)}\n${host.output().slice(-3000)}` },
  );
}
