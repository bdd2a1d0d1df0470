/**
 * The route × identity matrix (issue #36), generated from the route list: every route is called as
 * anonymous, submitter A, submitter B, a worker of P, a worker of Q and an admin, and each answer
 * falls in the class the route table gives (./support/identities.ts `expectedFor`): 401, 403, the
 * stranger's 404, or the handler's own answer. It runs in `keys` mode with Tallyho credentials (each
 * request still carries the key the host requires) and in `entra` mode with a local tenant's tokens,
 * on the devhost and (e2e-real) on the real host.
 *
 * The owned resources are made by A first; B made its own with the same names where names are the
 * caller's (an Idempotency-Key, a producer id, a gated run id). After the matrix, B's job, schedule,
 * gated run and producer are as B left them: nothing of the others' calls reached them.
 */
import { randomBytes } from 'node:crypto';

import { documentedRoutes } from '../../shared/app/routes';
import { startLocalTenant, type LocalTenant } from '../support/localTenant';
import { describeOwnHost, type E2eHost, hostLabel, startE2eHost } from './support/harness';
import {
  everyone,
  entraIdentities,
  type Expected,
  expectedFor,
  type Identities,
  keyIdentities,
  type Mode,
  newTag,
  type Processors,
  requestsAs,
  type Sent,
  type Who,
} from './support/identities';
import { type Answer, callRoute, type Fixture } from './support/matrixCalls';
import { heldLeaseSeconds } from './support/jobs';
import { unique } from './support/names';
import { until } from './support/wait';

/** Whether an answer falls in the expected class. */
function fits(answer: Answer, expected: Expected, owned: boolean): boolean {
  if (expected !== 'answer') return answer.status === expected && (expected !== 404 || answer.code === 'NotFound');
  if (answer.status === 401 || answer.status === 403 || answer.status >= 500) return false;
  // The owner's own 404 may say a file is not there yet, never that its resource does not exist.
  return !(owned && answer.status === 404 && /does not exist|^No schedule|^No run/.test(answer.detail ?? ''));
}

function matrixFor(mode: Mode): void {
  describeOwnHost(`identity matrix (${hostLabel()}, ${mode} mode)`, () => {
    let host: E2eHost;
    let tenant: LocalTenant | undefined;
    let ids: Identities;
    let fixture: Fixture;
    let jobB: string;
    let scheduleB: string;
    const processors: Processors = { p: unique('mx-p'), q: unique('mx-q') };

    const { send, made } = requestsAs(
      () => host,
      () => ids,
    );

    beforeAll(async () => {
      const key = randomBytes(32);
      tenant = mode === 'entra' ? await startLocalTenant() : undefined;
      host = await startE2eHost({ env: { TALLYHO_CREDENTIALS_KEY: key.toString('base64'), ...(tenant?.appSettings ?? {}) } });
      const issued =
        tenant === undefined ? await keyIdentities(host, key, processors, newTag()) : await entraIdentities(tenant, processors);
      ids = issued.identities;
      const gate = unique('mx-gate');
      const names = { gate, sequence: unique('mx-seq'), counter: unique('mx-ctr'), streamType: unique('mx-stream') };
      await made('admin', 'PUT', `/api/gates/${gate}`, {});
      await made('admin', 'PUT', `/api/sequences/${names.sequence}`, { prefix: 'ORD-', width: 7, checkDigit: true });
      await made('admin', 'PUT', `/api/counters/${names.counter}`, { mode: 'hits', partitions: 4, safetyWindowSeconds: 0 });
      await made('admin', 'PUT', `/api/processors/${processors.p}`, {
        type: 'external',
        leaseSeconds: heldLeaseSeconds,
        workers: [issued.workerPId],
      });
      await made('admin', 'PUT', `/api/processors/${processors.q}`, { type: 'external' });
      // The same Idempotency-Key from A and B: two jobs.
      const same = { 'idempotency-key': 'matrix-same-key' };
      const items = [{ id: 'i-1' }, { id: 'i-2' }];
      const jobA = String((await made('submitterA', 'POST', '/api/jobs', { processor: processors.p, items }, same)).id);
      jobB = String((await made('submitterB', 'POST', '/api/jobs', { processor: processors.p, items }, same)).id);
      expect(jobB).not.toBe(jobA);
      const at = '2099-01-01T00:00:00Z';
      const target = { type: 'queueMessage', queue: 'app-matrix', message: 1 };
      const scheduleA = String((await made('submitterA', 'POST', '/api/schedules', { at, target })).id);
      scheduleB = String((await made('submitterB', 'POST', '/api/schedules', { id: unique('mx-sb'), at, target })).id);
      const runB = unique('mx-run-b');
      await made('submitterB', 'POST', `/api/gates/${gate}/runs`, { runId: runB });
      const runA = String((await made('submitterA', 'POST', `/api/gates/${gate}/runs`, { runId: unique('mx-run-a') })).runId);
      const producer = unique('mx-producer');
      await made('submitterB', 'POST', `/api/streams/${names.streamType}/events`, { producer, seq: 1, data: { by: 'b' } });
      let last: Sent | undefined;
      const lease = await until(`a lease of P (last: ${JSON.stringify(last)})`, async () => {
        last = await send('workerP', 'POST', `/api/processors/${processors.p}/leases`, { wait: 1, maxItems: 1 });
        if (last.status !== 200 && last.status !== 204) throw new Error(`lease: ${last.status} ${JSON.stringify(last.body)}`);
        return last.status === 200 ? String(last.body.leaseId) : undefined;
      });
      fixture = { ...names, processorP: processors.p, jobA, scheduleA, runA, runB, producer, leaseP: lease };
    }, 120_000);

    afterAll(async () => {
      await host?.dispose();
      await tenant?.close();
    });

    test('every route × {anonymous, submitter A, submitter B, worker of P, worker of Q, admin} answers as the table says', async () => {
      const seen: { route: string; who: Who; expected: Expected; status: number; fits: boolean }[] = [];
      for (const route of documentedRoutes()) {
        for (const who of everyone) {
          const expected = expectedFor(route, who, mode);
          const answer = await callRoute(host, route, who, ids[who], fixture);
          const owned = expected === 'answer' && /^(jobs|schedules|gatesRunStatus)/.test(route.name) && who !== 'admin';
          seen.push({ route: route.name, who, expected, status: answer.status, fits: fits(answer, expected, owned) });
        }
      }
      expect(seen.filter((s) => !s.fits)).toEqual([]);
      // Every class occurs, so no rule of the table went untested.
      const classes = new Set(seen.map((s) => String(s.expected)));
      expect([...classes].sort()).toEqual(['401', '403', '404', 'answer']);
    }, 300_000);

    test("after the matrix, submitter B's job, schedule, gated run and producer are as B left them", async () => {
      const job = await send('submitterB', 'GET', `/api/jobs/${jobB}`);
      expect(job.status).toBe(200);
      expect(job.body.state).not.toBe('cancelled');
      const results = await send('submitterB', 'GET', `/api/jobs/${jobB}/results`);
      // Worker P completed nothing (an empty completion), and no one else could complete anything.
      expect(results.body.items).toEqual([]);
      const schedule = await send('submitterB', 'GET', `/api/schedules/${scheduleB}`);
      expect({ status: schedule.status, state: schedule.body.state }).toEqual({
        status: 200,
        state: expect.stringMatching(/pending|active/),
      });
      const run = await send('submitterB', 'GET', `/api/gates/${fixture.gate}/runs/${fixture.runB}`);
      expect(run.status).toBe(200);
      // Every other caller appended under B's producer id at seq 1000, B at 2: B's seq 3 is still new for B.
      const appended = await send('submitterB', 'POST', `/api/streams/${fixture.streamType}/events`, {
        producer: fixture.producer,
        seq: 3,
        data: { by: 'b' },
      });
      expect(appended.status).toBeLessThan(300);
      expect({ accepted: appended.body.accepted, duplicates: appended.body.duplicates }).toEqual({ accepted: 1, duplicates: 0 });
    }, 60_000);
  });
}

matrixFor('keys');
matrixFor('entra');
