/** Jobs over HTTP for the e2e tests: a job's view, waiting until it has settled, and prompt queue polling. */
import type { E2eHost } from './harness';
import { pollJson } from './http';

/**
 * Host settings under which queued work (job envelopes, gate and schedule actions) is picked up in a
 * fraction of a second: the queue listener's back-off otherwise grows to host.json's 5 s when idle.
 */
export const queuesPolledPromptly = { AzureFunctionsJobHost__extensions__queues__maxPollingInterval: '00:00:00.200' } as const;

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
 * lines delivered and its event handled. Fails with the host's recent output after `timeoutMs`.
 */
export async function settledJob(host: E2eHost, id: string, timeoutMs = 60_000): Promise<JobView> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await pollJson<JobView>(host, `/api/jobs/${id}`);
    if (res.status !== 200) throw new Error(`GET job ${id}: ${res.status} ${JSON.stringify(res.body)}`);
    const done = res.body.state === 'completed' || res.body.state === 'completedWithFailures';
    if (done && res.body.delivery !== 'pending' && res.body.event !== 'pending') return res.body;
    if (Date.now() > deadline) throw new Error(`job ${id} did not settle: ${JSON.stringify(res.body)}\n${host.output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
