/**
 * Pull workers for the jobs benchmark: declare an external processor on a running host, submit a
 * job to it, and run worker loops that lease batches and complete every item as succeeded, as the
 * TypeScript client's worker would (the loop is written out here so the figures show the HTTP API's
 * cost, not the client's scheduling). Also holds idle long-poll lease requests open.
 */
import { performance } from 'node:perf_hooks';

interface Lease {
  readonly leaseId: string;
  readonly items: readonly { readonly id: string }[];
}

async function call(url: string, method: string, body?: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, text: await res.text() };
}

async function expect(url: string, method: string, body: unknown, statuses: readonly number[]): Promise<string> {
  const { status, text } = await call(url, method, body);
  if (!statuses.includes(status)) throw new Error(`${method} ${url} answered ${status}: ${text.slice(0, 500)}`);
  return text;
}

export async function declareExternal(baseUrl: string, name: string, batchSize: number): Promise<void> {
  await expect(`${baseUrl}/api/processors/${name}`, 'PUT', { type: 'external', batchSize, leaseSeconds: 60, maxAttempts: 3 }, [200, 201]);
}

export interface PullRun {
  readonly items: number;
  readonly seconds: number;
  readonly leases: number;
  readonly emptyPolls: number;
}

/**
 * Submits `items` items to `processor` and runs `workers` loops until a completion reports the job
 * finished. Timed from the submission (its sends are part of what a batch size costs) to that answer.
 */
export async function pullRun(baseUrl: string, processor: string, items: number, workers: number): Promise<PullRun> {
  const payload = Array.from({ length: items }, (_, i) => ({ id: `it-${i}`, url: `https://example.com/${i}.jpg` }));
  const started = performance.now();
  await expect(`${baseUrl}/api/jobs`, 'POST', { processor, items: payload }, [202]);
  let finished = false;
  let leases = 0;
  let emptyPolls = 0;
  const loop = async (): Promise<void> => {
    while (!finished) {
      const taken = await call(`${baseUrl}/api/processors/${processor}/leases`, 'POST', { wait: 1 });
      if (taken.status === 204) {
        emptyPolls++;
        continue;
      }
      if (taken.status !== 200) throw new Error(`lease answered ${taken.status}: ${taken.text.slice(0, 500)}`);
      const lease = JSON.parse(taken.text) as Lease;
      leases++;
      const results = lease.items.map((item) => ({ id: item.id, status: 'succeeded', output: { ok: true } }));
      const done = JSON.parse(await expect(`${baseUrl}/api/leases/${lease.leaseId}/complete`, 'POST', { results }, [200])) as {
        jobFinished: boolean;
      };
      if (done.jobFinished) finished = true;
    }
  };
  await Promise.all(Array.from({ length: workers }, loop));
  return { items, seconds: (performance.now() - started) / 1000, leases, emptyPolls };
}

/** Fires `count` lease requests that wait `waitSeconds` on an empty processor; resolves with their statuses once all answered. */
export function holdIdleLeases(baseUrl: string, processor: string, count: number, waitSeconds: number): Promise<number[]> {
  return Promise.all(
    Array.from(
      { length: count },
      async () => (await call(`${baseUrl}/api/processors/${processor}/leases`, 'POST', { wait: waitSeconds })).status,
    ),
  );
}
