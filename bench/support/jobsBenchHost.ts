/**
 * What the jobs benches that drive a host over HTTP share (jobsCancel.ts, jobsRetry.ts): a host of
 * their own (its own task hub and job queues), a call helper with the keys the routes need, and the
 * machine's load for the table titles.
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';

import { type BenchHost, startBenchHost } from './benchHost';
import { sampleSettings } from './settings';

interface Call {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

/** A request to the host: the function key, or the admin key when `admin`; a JSON body in and out. */
export type Caller = (method: string, path: string, body?: unknown, admin?: boolean) => Promise<Call>;

export function caller(host: BenchHost): Caller {
  return async (method, path, body, admin = false) => {
    const key = admin ? host.keys.admin : (host.keys.function ?? host.keys.admin);
    const res = await fetch(`${host.baseUrl}${path}`, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(key ? { 'x-functions-key': key } : {}) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
  };
}

/** A host (`startBenchHost` chooses which) with a task hub and job queues of its own, polling leases every `pollMs` at most. */
export function startJobsBenchHost(tag: string, pollMs: number): Promise<BenchHost> {
  const hub = `bench${tag}${Date.now() % 100000}`;
  return startBenchHost({
    env: {
      ...sampleSettings(),
      TALLYHO_TASK_HUB: hub,
      AzureFunctionsJobHost__extensions__durableTask__hubName: hub,
      TALLYHO_JOBS_QUEUE_PREFIX: `j${tag.slice(0, 1)}-${randomBytes(4).toString('hex')}`,
      TALLYHO_JOBS_LEASE_POLL_MAX_MS: String(pollMs),
    },
  });
}

/** The load averages (1, 5, 15 min) now. */
export function loadNow(): string {
  return loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');
}
