/**
 * The drain of a graceful stop (SIGTERM to the host alone, as the platform sends it), on the host of
 * the run: the port stops listening at once — a new connection is refused — and a lease long poll
 * already in the app is answered, empty (`204`), not cut off. What the real host does is the rule:
 * observed on 4.1037 with Node worker 3.9.1 (devhost/docs/real-host.md, "During the drain"), it
 * sends no `503` at all; the devhost does the same, and answers a request whose headers were still
 * arriving `503` problem+json with `Retry-After` (devhost/test/shutdown.test.ts: before #37 that
 * `503` had an empty body and no `Retry-After`).
 */
import { connect } from 'node:net';

import { QueueServiceClient } from '@azure/storage-queue';

import { until } from '../support/waits';
import { describeOwnHost, type E2eHost, startE2eHost, storageOf } from './support/harness';
import { requestJson } from './support/http';
import { unique } from './support/names';

/** True once a new TCP connection to the host's port is refused; undefined while it is still accepted. */
function refused(host: E2eHost): Promise<true | undefined> {
  const { hostname, port } = new URL(host.baseUrl);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname === 'localhost' ? '127.0.0.1' : hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED' ? true : undefined));
  });
}

describeOwnHost('a graceful stop', () => {
  let host: E2eHost | undefined;

  afterAll(async () => {
    await host?.dispose();
  });

  it('refuses new connections at once and answers the lease long poll in flight (204), with no 503', async () => {
    const prefix = unique('dr');
    host = await startE2eHost({ env: { TALLYHO_JOBS_QUEUE_PREFIX: prefix } });
    const started = host;
    const processor = unique('drain');
    const declared = await requestJson(started, 'PUT', `/api/processors/${processor}`, { key: 'admin', body: { type: 'external' } });
    expect(declared.status).toBeLessThan(300);

    const inFlight = requestJson(started, 'POST', `/api/processors/${processor}/leases`, { body: { wait: 20 } });
    // A waiting lease request polls the processor's retry lane, which its first look creates.
    const lane = QueueServiceClient.fromConnectionString(storageOf(started)).getQueueClient(`${prefix}-r-${processor}`);
    await until('the long poll to be in the app', async () => ((await lane.exists()) ? true : undefined), {
      everyMs: 100,
      report: () => started.output().slice(-3000),
    });
    host = undefined;
    const stopped = started.stop();
    await until('a new connection to be refused', () => refused(started), { everyMs: 50, report: () => started.output().slice(-3000) });

    const answered = await inFlight;
    expect({ status: answered.status, body: answered.body }).toEqual({ status: 204, body: undefined });
    await stopped;
  });
});
