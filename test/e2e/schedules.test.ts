/**
 * Schedules over HTTP against devhost child processes. Most cases run on the virtual clock (hours
 * and days of durable timers in milliseconds); overlap needs runs that take real time, so it runs
 * on a real-clock host with a slow local HTTPS webhook; catch-up stops the host for a while and
 * restarts it on its persisted state. Fires are checked twice: in the schedule's run history and in
 * the target queue itself.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { TableClient } from '@azure/data-tables';
import { QueueServiceClient } from '@azure/storage-queue';

import type { ScheduleView } from '../../shared/schedules/views';
import { selfSignedCert } from '../support/selfSignedCert';
import { describeDevhost, type E2eHost, ownHostTest, startE2eHost, storageOf } from './support/harness';
import { periodicTimersOff } from './support/timers';
import { expectProblem, type JsonResponse, requestJson } from './support/http';
import { unique } from './support/names';
import { readAll } from './support/pages';
import { until as waitUntil } from './support/wait';
import { queuesPolledPromptly } from './support/jobs';

type Schedule = ScheduleView;
type Run = ScheduleView['runs'][number];

/** Settings every host here gets: the other capabilities' timers would otherwise fire every 30-60 virtual seconds. */
const quietTimers = periodicTimersOff;

async function queueTexts(host: E2eHost, queue: string): Promise<string[]> {
  const client = QueueServiceClient.fromConnectionString(storageOf(host)).getQueueClient(queue);
  if (!(await client.exists())) return [];
  const peeked = await client.peekMessages({ numberOfMessages: 32 });
  return peeked.peekedMessageItems.map((m) => Buffer.from(m.messageText, 'base64').toString('utf8'));
}

async function indexRowExists(host: E2eHost, id: string): Promise<boolean> {
  const table = TableClient.fromConnectionString(storageOf(host), 'schedules', { allowInsecureConnection: true });
  try {
    await table.getEntity(id, 'schedule');
    return true;
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return false;
    throw err;
  }
}

function api(host: E2eHost) {
  return {
    create: (body: unknown) => requestJson<Schedule>(host, 'POST', '/api/schedules', { body }),
    get: (id: string) => requestJson<Schedule>(host, 'GET', `/api/schedules/${id}`),
    // Controls and the list are operator actions (admin level; see shared/http/authorization.ts).
    cancel: (id: string) => requestJson<Schedule>(host, 'DELETE', `/api/schedules/${id}`, { key: 'admin' }),
    pause: (id: string) => requestJson<Schedule>(host, 'POST', `/api/schedules/${id}/pause`, { key: 'admin' }),
    resume: (id: string) => requestJson<Schedule>(host, 'POST', `/api/schedules/${id}/resume`, { key: 'admin' }),
    trigger: (id: string) =>
      requestJson<{ triggerId: string; schedule: Schedule }>(host, 'POST', `/api/schedules/${id}/trigger`, { key: 'admin' }),
    list: (query: string) =>
      requestJson<{ items: Schedule[]; continuationToken?: string }>(host, 'GET', `/api/schedules${query}`, { key: 'admin' }),
    instance: (id: string) =>
      requestJson<{ runtimeStatus: string }>(host, 'GET', `/runtime/webhooks/durabletask/instances/${id}`, { key: 'admin' }),
    async now(): Promise<number> {
      const res = await requestJson<{ now: string }>(host, 'GET', '/admin/devhost/clock', { key: 'admin' });
      return Date.parse(res.body.now);
    },
    async advanceTo(at: number | string, timeoutMs?: number): Promise<void> {
      await host.advanceClock({ to: typeof at === 'number' ? new Date(at).toISOString() : at }, timeoutMs);
    },
  };
}

async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  let last: T | undefined;
  try {
    return await waitUntil(
      what,
      async () => {
        last = await read();
        return done(last) ? last : undefined;
      },
      timeoutMs,
    );
  } catch (err) {
    throw new Error(`${err instanceof Error ? err.message : String(err)}\nlast value: ${JSON.stringify(last)}`);
  }
}

const ran = (s: Schedule): Run[] => s.runs.filter((r) => r.runId !== undefined);
const body = <T>(res: JsonResponse<T>, status: number): T => {
  expect({ status: res.status, body: res.body }).toEqual({ status, body: expect.anything() });
  return res.body;
};

describeDevhost('schedules on the virtual clock', () => {
  let host: E2eHost;
  let s: ReturnType<typeof api>;

  beforeAll(async () => {
    // Jobs a schedule submits are worked in real time, so their queues are polled promptly.
    host = await startE2eHost({ virtualClock: true, env: { ...quietTimers, ...queuesPolledPromptly } });
    s = api(host);
  });
  afterAll(async () => {
    await host.stop();
  });

  test('a one-off fires once, at its time, and completes', async () => {
    const id = unique('once');
    const queue = unique('app-out');
    const at = new Date((await s.now()) + 3600_000).toISOString();
    const created = body(await s.create({ id, at, target: { type: 'queueMessage', queue, message: { order: 42 } } }), 201);
    // Pending until its orchestration's first step, a moment later.
    expect(created).toMatchObject({ id, state: 'pending', nextFireAt: at, runCount: 0 });
    await until(
      'the orchestration to start',
      () => s.get(id),
      (r) => r.body.state === 'active',
    );

    await s.advanceTo(Date.parse(at) - 1000);
    expect(ran(body(await s.get(id), 200))).toEqual([]);
    expect(await queueTexts(host, queue)).toEqual([]);

    await s.advanceTo(Date.parse(at) + 1000);
    const after = await until(
      'the run and the end',
      () => s.get(id),
      (r) => r.body.state === 'completed',
    );
    expect(ran(after.body)).toEqual([expect.objectContaining({ at, kind: 'scheduled', outcome: 'succeeded' })]);
    expect(after.body).toMatchObject({ runCount: 1, nextFireAt: null });
    expect(await queueTexts(host, queue)).toEqual(['{"order":42}']);

    await s.advanceTo(Date.parse(at) + 86_400_000);
    expect(await queueTexts(host, queue)).toHaveLength(1);
    expect((await s.instance(id)).body.runtimeStatus).toBe('Completed');
    // Same id, same definition: idempotent; another definition: 409.
    expect((await s.create({ id, at, target: { type: 'queueMessage', queue, message: { order: 42 } } })).status).toBe(200);
    expectProblem(await s.create({ id, at, target: { type: 'queueMessage', queue, message: { order: 43 } } }), 409, 'Conflict');
    expectProblem(await s.cancel(id), 409, 'Conflict');
  });

  test('a one-off three weeks out sleeps through its hourly rechecks and fires once, at its time', async () => {
    const id = unique('far');
    const queue = unique('app-out');
    const at = new Date((await s.now()) + 21 * 86_400_000).toISOString();
    body(await s.create({ id, at, target: { type: 'queueMessage', queue, message: 'far' } }), 201);
    await until(
      'the orchestration to start',
      () => s.get(id),
      (r) => r.body.state === 'active',
    );

    // A day short of it: hundreds of rechecks (and continue-as-new) later, still waiting, nothing sent.
    // About 500 virtual hours, 13 s with the file alone; one full run on a busy 2-core machine needed
    // more than the usual 90 s, so this advance alone gets more.
    await s.advanceTo(Date.parse(at) - 86_400_000, 200_000);
    const waiting = body(await s.get(id), 200);
    expect(waiting).toMatchObject({ state: 'active', nextFireAt: at, runCount: 0 });
    expect(await queueTexts(host, queue)).toEqual([]);

    await s.advanceTo(Date.parse(at) + 1000);
    const after = await until(
      'the far run and the end',
      () => s.get(id),
      (r) => r.body.state === 'completed',
    );
    expect(ran(after.body)).toEqual([expect.objectContaining({ at, kind: 'scheduled', outcome: 'succeeded' })]);
    expect(after.body).toMatchObject({ runCount: 1, nextFireAt: null });
    expect(await queueTexts(host, queue)).toEqual(['far']);
    expect((await s.instance(id)).body.runtimeStatus).toBe('Completed');
  }, 240_000);

  test('a one-off cancelled before its time never fires', async () => {
    const id = unique('cancelled');
    const queue = unique('app-out');
    const at = new Date((await s.now()) + 3600_000).toISOString();
    body(await s.create({ id, at, target: { type: 'queueMessage', queue, message: 'never' } }), 201);
    expect(body(await s.cancel(id), 200)).toMatchObject({ state: 'cancelled', nextFireAt: null });
    expect(body(await s.cancel(id), 200)).toMatchObject({ state: 'cancelled' });
    await s.advanceTo(Date.parse(at) + 3600_000);
    expect(ran(body(await s.get(id), 200))).toEqual([]);
    expect(await queueTexts(host, queue)).toEqual([]);
    await until(
      'the orchestration to end',
      () => s.instance(id),
      (r) => r.body.runtimeStatus === 'Completed',
    );
  });

  test('a cancel racing the fire ends in exactly one reported outcome', async () => {
    const base = (await s.now()) + 60_000;
    const cases = Array.from({ length: 6 }, (_, i) => ({
      id: unique(`race${i}`),
      queue: unique('app-out'),
      at: new Date(base + i * 7).toISOString(),
    }));
    for (const c of cases)
      body(await s.create({ id: c.id, at: c.at, target: { type: 'queueMessage', queue: c.queue, message: c.id } }), 201);
    // Cancel each one while the clock passes its time.
    const moving = s.advanceTo(base + 5000);
    const cancels = await Promise.all(cases.map(async (c, i) => (await sleep(i * 15), s.cancel(c.id))));
    await moving;
    for (const [i, c] of cases.entries()) {
      const final = await until(
        'a final state',
        () => s.get(c.id),
        (r) => r.body.state === 'completed' || r.body.state === 'cancelled',
      );
      const messages = await queueTexts(host, c.queue);
      const cancel = cancels[i] as JsonResponse;
      if (cancel.status === 200) {
        // The cancel won: nothing ran, nothing was sent.
        expect({ state: final.body.state, runs: ran(final.body), messages }).toEqual({ state: 'cancelled', runs: [], messages: [] });
      } else {
        // The fire won: the cancel was told so, and the fire happened exactly once.
        expectProblem(cancel, 409, 'Conflict');
        expect({ state: final.body.state, runs: ran(final.body).map((r) => r.outcome), messages }).toEqual({
          state: 'completed',
          runs: ['succeeded'],
          messages: [c.id],
        });
      }
    }
  });

  test('pause skips fires until resume, which continues with the next fire', async () => {
    const id = unique('paused');
    const queue = unique('app-out');
    body(await s.create({ id, cron: '0 * * * * *', target: { type: 'queueMessage', queue, message: 'tick' } }), 201);
    const start = await s.now();
    await until(
      'the first checkpoint',
      () => s.get(id),
      (r) => r.body.nextFireAt !== null && Date.parse(r.body.nextFireAt) > start,
    );
    const first = Date.parse((await s.get(id)).body.nextFireAt as string);
    await s.advanceTo(first + 60_000 + 500); // two fires
    expect(
      ran(
        (
          await until(
            'two runs',
            () => s.get(id),
            (r) => ran(r.body).length === 2,
          )
        ).body,
      ).map((r) => r.at),
    ).toEqual([new Date(first).toISOString(), new Date(first + 60_000).toISOString()]);

    expect(body(await s.pause(id), 200)).toMatchObject({ state: 'paused' });
    expect(body(await s.pause(id), 200)).toMatchObject({ state: 'paused' });
    await until(
      'the pause to be applied',
      () => s.get(id),
      (r) => r.body.nextFireAt === null,
    );
    await s.advanceTo(first + 6 * 60_000 + 500);
    expect(ran(body(await s.get(id), 200))).toHaveLength(2);
    expect(await queueTexts(host, queue)).toHaveLength(2);

    expect(body(await s.resume(id), 200)).toMatchObject({ state: 'active' });
    const resumed = await until(
      'the resume to be applied',
      () => s.get(id),
      (r) => r.body.nextFireAt !== null,
    );
    expect(resumed.body.nextFireAt).toBe(new Date(first + 7 * 60_000).toISOString());
    expect(resumed.body.runs).toContainEqual(expect.objectContaining({ outcome: 'skipped', reason: 'paused', count: 5 }));
    await s.advanceTo(first + 7 * 60_000 + 500);
    const after = await until(
      'the next run',
      () => s.get(id),
      (r) => ran(r.body).length === 3,
    );
    expect(ran(after.body)[2]).toMatchObject({ at: new Date(first + 7 * 60_000).toISOString(), outcome: 'succeeded' });
    expect(body(await s.cancel(id), 200)).toMatchObject({ state: 'cancelled' });
  });

  test('a job target submits the job when due; the run lasts until the job has finished', async () => {
    const id = unique('job');
    const at = new Date((await s.now()) + 60_000).toISOString();
    const items = [1, 2, 3].map((n) => ({
      id: `tx-${n}`,
      customerId: `c-${n % 2}`,
      amountMinor: 1000 * n,
      currency: 'EUR',
      taxCategory: 'standard',
      occurredAt: '2026-03-01T12:00:00Z',
    }));
    body(await s.create({ id, at, target: { type: 'job', processor: 'billing', items } }), 201);
    await s.advanceTo(Date.parse(at) + 1000);
    const started = await until(
      'the job to start',
      () => s.get(id),
      (r) => ran(r.body).some((x) => x.detail?.startsWith('started ') === true),
    );
    const run = ran(started.body)[0] as Run;
    expect(run).toMatchObject({ outcome: 'running', kind: 'scheduled', at });
    const jobId = (run.detail ?? '').slice('started '.length);
    // The jobs capability processes it (queue triggers, real time); the schedule polls it every 30 s.
    await until(
      'the job to finish',
      () => requestJson(host, 'GET', `/api/jobs/${jobId}`),
      (r) => r.status === 200 && /"completed"/.test(JSON.stringify(r.body)),
      40_000,
    );
    await s.advanceTo(Date.parse(at) + 40_000);
    const finished = await until(
      'the run to end',
      () => s.get(id),
      (r) => r.body.state === 'completed',
    );
    expect(ran(finished.body)).toEqual([
      expect.objectContaining({ outcome: 'succeeded', detail: `job ${jobId} completed (3 succeeded, 0 failed)` }),
    ]);
  }, 90_000);

  test('a gateRelease target releases the gate through the gates capability when due', async () => {
    const gate = unique('gate');
    expect((await requestJson(host, 'PUT', `/api/gates/${gate}`, { body: {}, key: 'admin' })).status).toBe(201);
    const id = unique('release');
    const at = new Date((await s.now()) + 3600_000).toISOString();
    // A gate release is an admin action: the function-level create refuses it, the admin-level one records its creator.
    expectProblem(await s.create({ id, at, target: { type: 'gateRelease', gate } }), 403, 'Forbidden');
    const privileged = { key: 'admin' as const, body: { id, at, target: { type: 'gateRelease', gate }, by: 'ops' } };
    const created = body(await requestJson<Schedule>(host, 'POST', '/api/schedules/privileged', privileged), 201);
    expect(created.createdBy).toEqual({ by: 'ops', level: 'admin', owner: 'admin:master-key' });
    const gateState = async () => (await requestJson<{ state: string; releasedBy: string | null }>(host, 'GET', `/api/gates/${gate}`)).body;
    await s.advanceTo(Date.parse(at) - 1000);
    expect((await gateState()).state).toBe('closed');
    await s.advanceTo(Date.parse(at) + 1000);
    // The schedule is admin-made: the admin reads what its run did; no one else reads it.
    const done = await until(
      'the release run',
      () => requestJson<Schedule>(host, 'GET', `/api/schedules/${id}/privileged`, { key: 'admin' }),
      (r) => r.body.state === 'completed',
    );
    expect(ran(done.body)).toEqual([expect.objectContaining({ outcome: 'succeeded', detail: 'released' })]);
    // A function key holder is not its owner: for it there is no such schedule (docs/security.md "Ownership").
    expect((await s.get(id)).status).toBe(404);
    expect(await gateState()).toMatchObject({ state: 'released', releasedBy: `schedule:${id}` });
    // The audit row is written with the release (shared/gates/service.ts), which the schedule's run makes.
    const auditRows = await until(
      'the release in the gate audit',
      () => readAll<{ kind: string; by: string; note?: string }>(host, `/api/gates/${gate}/audit`, { key: 'admin' }),
      (rows) => rows.some((row) => row.kind === 'release'),
    );
    expect(auditRows.find((r) => r.kind === 'release')).toMatchObject({
      by: `schedule:${id}`,
      note: expect.stringContaining('created by "ops" with the admin key'),
    });
  });
});

describe('schedules on any host (no time travel needed)', () => {
  let host: E2eHost;
  let s: ReturnType<typeof api>;

  beforeAll(async () => {
    host = await startE2eHost({ env: quietTimers });
    s = api(host);
  });
  afterAll(async () => {
    await host.stop();
  });

  test('a one-off a few seconds out fires once, not before its time, on real time', async () => {
    const id = unique('soon');
    const queue = unique('app-out');
    // Whole seconds, a few ahead: durable timers on Azurite have fired up to ~1 s early on the real
    // host (devhost/docs/real-host.md#timers), which the schedule must not pass on as an early fire.
    const at = new Date(Math.ceil(Date.now() / 1000) * 1000 + 6000).toISOString();
    body(await s.create({ id, at, target: { type: 'queueMessage', queue, message: 'soon' } }), 201);
    const after = await until(
      'the run and the end',
      () => s.get(id),
      (r) => r.body.state === 'completed',
      60_000,
    );
    const [run] = ran(after.body);
    expect(run).toMatchObject({ at, kind: 'scheduled', outcome: 'succeeded' });
    expect(Date.parse(run?.startedAt ?? '')).toBeGreaterThanOrEqual(Date.parse(at));
    expect(await queueTexts(host, queue)).toEqual(['soon']);
  }, 90_000);

  test('trigger now runs the target at once, also while paused', async () => {
    const id = unique('trigger');
    const queue = unique('app-out');
    const at = new Date(Date.now() + 7 * 86_400_000).toISOString();
    body(await s.create({ id, at, target: { type: 'queueMessage', queue, message: 'now' } }), 201);
    const t1 = body(await s.trigger(id), 202);
    const first = await until(
      'the triggered run',
      () => s.get(id),
      (r) => ran(r.body).some((x) => x.triggerId === t1.triggerId && x.outcome === 'succeeded'),
    );
    expect(ran(first.body)).toEqual([expect.objectContaining({ kind: 'trigger', triggerId: t1.triggerId, outcome: 'succeeded' })]);
    expect(await queueTexts(host, queue)).toEqual(['now']);

    body(await s.pause(id), 200);
    const t2 = body(await s.trigger(id), 202);
    await until(
      'the second triggered run',
      () => s.get(id),
      (r) => ran(r.body).some((x) => x.triggerId === t2.triggerId && x.outcome === 'succeeded'),
    );
    expect(await queueTexts(host, queue)).toEqual(['now', 'now']);
    // The one-off itself has not fired: it is still waiting (paused) for its time.
    expect(body(await s.get(id), 200)).toMatchObject({ state: 'paused', runCount: 2 });
    body(await s.cancel(id), 200);
    expectProblem(await s.trigger(id), 409, 'Conflict');
  });

  test('bad cron, time or zone is a 400 problem and creates nothing: no index row, no orchestration', async () => {
    const target = { type: 'queueMessage', queue: 'app-never-used', message: 'x' };
    const cases: [string, Record<string, unknown>, string][] = [
      ['five-field cron', { cron: '0 * * * *' }, 'body.cron'],
      ['cron out of range', { cron: '61 * * * * *' }, 'body.cron'],
      ['cron that never fires', { cron: '0 0 0 30 2 *' }, 'body.cron'],
      ['unknown zone', { cron: '0 0 9 * * *', timeZone: 'Mars/Olympus' }, 'body.timeZone'],
      ['offset as zone', { cron: '0 0 9 * * *', timeZone: '+05:00' }, 'body.timeZone'],
      ['time without offset', { at: '2027-01-15T09:00:00' }, 'body.at'],
      ['not a time', { at: 'tomorrow' }, 'body.at'],
      ['both at and cron', { at: '2027-01-15T09:00:00Z', cron: '0 0 9 * * *' }, 'body.at'],
      ['neither', {}, 'body.at'],
      ['zone with at', { at: '2027-01-15T09:00:00Z', timeZone: 'UTC' }, 'body.timeZone'],
    ];
    for (const [name, timing, path] of cases) {
      const id = unique('bad');
      const problem = expectProblem(await s.create({ id, ...timing, target }), 400, 'ValidationFailed');
      expect({ name, paths: problem.issues?.map((i) => i.path) }).toEqual({ name, paths: expect.arrayContaining([path]) });
      expect({ name, row: await indexRowExists(host, id), instance: (await s.instance(id)).status }).toEqual({ name, row: false, instance: 404 });
    }
    // Targets this deployment refuses are 400s too (and create nothing).
    const id = unique('bad');
    const refused = expectProblem(
      await s.create({ id, at: '2027-01-15T09:00:00Z', target: { type: 'webhook', url: 'https://127.0.0.1/hook' } }),
      400,
    );
    expect(refused.issues).toEqual([{ path: 'body.target.url', message: expect.stringMatching(/allow-list/) }]);
    expect(await indexRowExists(host, id)).toBe(false);
    const job = expectProblem(
      await s.create({ id, at: '2027-01-15T09:00:00Z', target: { type: 'job', processor: 'payroll', items: [{ id: 'a' }] } }),
      400,
    );
    expect(job.issues?.map((i) => i.path)).toEqual(['body.target.processor']);
    expect((await s.instance(id)).status).toBe(404);
  });

  test('lists schedules by state, a page at a time', async () => {
    const ids = Array.from({ length: 3 }, () => unique('listed'));
    const at = new Date(Date.now() + 30 * 86_400_000).toISOString();
    for (const id of ids) body(await s.create({ id, at, target: { type: 'queueMessage', queue: 'app-listed-out', message: id } }), 201);
    body(await s.pause(ids[1] as string), 200);
    const seen = new Map<string, string>();
    let token: string | undefined;
    let pages = 0;
    do {
      const query: string = `?state=paused&maxPageSize=2${token === undefined ? '' : `&continuationToken=${encodeURIComponent(token)}`}`;
      const page = body(await s.list(query), 200);
      expect(page.items.length).toBeLessThanOrEqual(2);
      for (const item of page.items) seen.set(item.id, item.state);
      token = page.continuationToken;
      pages++;
    } while (token !== undefined && pages < 100);
    expect(seen.get(ids[1] as string)).toBe('paused');
    expect(seen.has(ids[0] as string)).toBe(false);
    expect([...seen.values()].every((state) => state === 'paused')).toBe(true);
    expectProblem(await s.list('?state=sleeping'), 400, 'ValidationFailed');
    for (const id of ids) body(await s.cancel(id), 200);
  });
});

describeDevhost('schedules across a daylight-saving change', () => {
  let host: E2eHost;
  let s: ReturnType<typeof api>;

  beforeAll(async () => {
    // A daily recheck instead of an hourly one: fewer clock steps over the four simulated days.
    host = await startE2eHost({ virtualClock: true, env: { ...quietTimers, TALLYHO_SCHEDULES_RECHECK_SECONDS: '86400' } });
    s = api(host);
  });
  afterAll(async () => {
    await host.stop();
  });

  test('America/New_York in March: fires at the right local times, the gap time once at 03:00', async () => {
    await s.advanceTo('2027-03-12T12:00:00Z');
    const queue = unique('app-dst');
    const gap = unique('gap');
    const nine = unique('nine');
    body(
      await s.create({
        id: gap,
        cron: '0 30 2 * * *',
        timeZone: 'America/New_York',
        target: { type: 'queueMessage', queue, message: 'gap' },
      }),
      201,
    );
    body(
      await s.create({
        id: nine,
        cron: '0 0 9 * * *',
        timeZone: 'America/New_York',
        target: { type: 'queueMessage', queue, message: 'nine' },
      }),
      201,
    );
    await until(
      'both started',
      () => s.get(nine),
      (r) => r.body.nextFireAt === '2027-03-12T14:00:00.000Z',
    );
    await s.advanceTo('2027-03-16T12:00:00Z');
    const gapRuns = ran(
      (
        await until(
          'gap runs',
          () => s.get(gap),
          (r) => ran(r.body).length === 4,
        )
      ).body,
    );
    expect(gapRuns.map((r) => `${r.at} ${r.outcome}`)).toEqual([
      '2027-03-13T07:30:00.000Z succeeded', // 02:30 EST
      '2027-03-14T07:00:00.000Z succeeded', // 02:30 does not exist: 03:00 EDT
      '2027-03-15T06:30:00.000Z succeeded', // 02:30 EDT
      '2027-03-16T06:30:00.000Z succeeded',
    ]);
    const nineRuns = ran(
      (
        await until(
          'nine runs',
          () => s.get(nine),
          (r) => ran(r.body).length === 4,
        )
      ).body,
    );
    expect(nineRuns.map((r) => r.at)).toEqual([
      '2027-03-12T14:00:00.000Z', // 09:00 EST
      '2027-03-13T14:00:00.000Z',
      '2027-03-14T13:00:00.000Z', // 09:00 EDT
      '2027-03-15T13:00:00.000Z',
    ]);
    expect((await queueTexts(host, queue)).sort()).toEqual(['gap', 'gap', 'gap', 'gap', 'nine', 'nine', 'nine', 'nine']);
    body(await s.cancel(gap), 200);
    body(await s.cancel(nine), 200);
  }, 120_000);
});

describeDevhost('catch-up after the host was down', () => {
  let host: E2eHost;
  let s: ReturnType<typeof api>;

  beforeAll(async () => {
    // One second of grace: a fire more than a second old when the schedule gets to it is missed.
    // Crons every 2 s make catch-up quick to see; the floor for function-level crons would refuse them.
    host = await startE2eHost({
      virtualClock: true,
      env: { ...quietTimers, TALLYHO_SCHEDULES_MISFIRE_GRACE_SECONDS: '1', TALLYHO_SCHEDULES_MIN_CRON_INTERVAL_SECONDS: '1' },
    });
    s = api(host);
  });
  afterAll(async () => {
    await host.stop();
  });

  test('restarted on its persisted state, each policy deals with the missed fires', async () => {
    // The host comes back with its virtual clock 12 s past the real time (restart's clockStartsAt;
    // the clock would otherwise start at the real time), as if it had been down for those seconds
    // (and the time the test took so far) while three recurrences (every 2 s) and two one-offs came due.
    const queue = (p: string) => `app-${p}-${randomBytes(4).toString('hex')}`;
    const now = await s.now();
    const at = new Date(now + 4000).toISOString();
    const cases = {
      none: { id: unique('cu-none'), queue: queue('cu-none'), catchUp: 'none' },
      once: { id: unique('cu-once'), queue: queue('cu-once'), catchUp: 'once' },
      all: { id: unique('cu-all'), queue: queue('cu-all'), catchUp: { policy: 'all', limit: 3 } },
      onceNone: { id: unique('cu-1none'), queue: queue('cu-1none'), catchUp: 'none' },
      onceOnce: { id: unique('cu-1once'), queue: queue('cu-1once'), catchUp: 'once' },
    };
    for (const key of ['none', 'once', 'all'] as const) {
      const c = cases[key];
      body(
        await s.create({
          id: c.id,
          cron: '*/2 * * * * *',
          catchUp: c.catchUp,
          target: { type: 'queueMessage', queue: c.queue, message: key },
        }),
        201,
      );
    }
    for (const key of ['onceNone', 'onceOnce'] as const) {
      const c = cases[key];
      body(await s.create({ id: c.id, at, catchUp: c.catchUp, target: { type: 'queueMessage', queue: c.queue, message: key } }), 201);
    }
    for (const c of Object.values(cases))
      await until(
        'started',
        () => s.get(c.id),
        (r) => r.body.nextFireAt !== null && r.body.state === 'active',
      );
    await host.restart({ clockStartsAt: Date.now() + 12_000 });

    // The recurrences: the timer that came due while down wakes each once; nothing moves the clock after.
    // Caught up: the misses are recorded, nothing runs, and nothing changes for a while.
    const settled = async (id: string): Promise<Schedule> => {
      let previous = '';
      const done = await until(
        `${id} caught up`,
        async () => (await sleep(500), (await s.get(id)).body),
        (x) => {
          const text = JSON.stringify(x.runs);
          const stable = text === previous;
          previous = text;
          return stable && x.runs.some((r) => r.outcome === 'missed') && !x.runs.some((r) => r.outcome === 'running');
        },
      );
      return done;
    };
    const none = await settled(cases.none.id);
    const once = await settled(cases.once.id);
    const all = await settled(cases.all.id);
    const missed = (x: Schedule) => x.runs.find((r) => r.outcome === 'missed')?.count ?? 0;
    // none: missed fires do not run (only a fire under a second old would).
    expect(ran(none).every((r) => r.kind === 'scheduled')).toBe(true);
    expect(ran(none).length).toBeLessThanOrEqual(1);
    expect(missed(none)).toBeGreaterThanOrEqual(4);
    // once: one run for the whole backlog, the newest fire.
    expect(ran(once)).toHaveLength(1);
    expect(missed(once)).toBeGreaterThanOrEqual(4);
    // all (limit 3): the three newest fires, oldest first; the older ones are missed.
    const allRuns = ran(all);
    expect(allRuns).toHaveLength(3);
    expect(allRuns.map((r) => Date.parse(r.at))).toEqual([...allRuns.map((r) => Date.parse(r.at))].sort((a, b) => a - b));
    expect(Date.parse((allRuns[1] as Run).at) - Date.parse((allRuns[0] as Run).at)).toBe(2000);
    expect(missed(all)).toBeGreaterThanOrEqual(2);
    expect(await queueTexts(host, cases.all.queue)).toEqual(['all', 'all', 'all']);
    expect(await queueTexts(host, cases.once.queue)).toEqual(['once']);

    // The one-offs, late by several seconds: `none` misses it, `once` runs it (as a catch-up).
    const oneOffNone = await until(
      'one-off none',
      () => s.get(cases.onceNone.id),
      (r) => r.body.state === 'completed',
    );
    expect(ran(oneOffNone.body)).toEqual([]);
    expect(oneOffNone.body.runs).toEqual([expect.objectContaining({ outcome: 'missed', count: 1 })]);
    const oneOffOnce = await until(
      'one-off once',
      () => s.get(cases.onceOnce.id),
      (r) => r.body.state === 'completed',
    );
    expect(ran(oneOffOnce.body)).toEqual([expect.objectContaining({ at, kind: 'catchUp', outcome: 'succeeded' })]);
    expect(await queueTexts(host, cases.onceNone.queue)).toEqual([]);
    expect(await queueTexts(host, cases.onceOnce.queue)).toEqual(['onceOnce']);
    for (const key of ['none', 'once', 'all'] as const) body(await s.cancel(cases[key].id), 200);
  });
});

/** One webhook call as the endpoint saw it (its own clock: the same machine's as the host's). */
interface Call {
  start: number;
  end: number;
  scheduledFor: string;
}

describe('overlap policies with a slow webhook (real clock)', () => {
  const tls = selfSignedCert(['localhost']);
  const caFile = join(tmpdir(), `tallyho-e2e-ca-${randomBytes(4).toString('hex')}.pem`);
  let server: Server;
  let port = 0;
  let host: E2eHost;
  let s: ReturnType<typeof api>;
  const calls = new Map<string, Call[]>();
  const holdMs = 2500;

  beforeAll(async () => {
    writeFileSync(caFile, tls.cert);
    server = createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => {
        const start = Date.now();
        const payload = JSON.parse(text) as { scheduleId: string; scheduledFor: string };
        setTimeout(() => {
          const list = calls.get(payload.scheduleId) ?? [];
          list.push({ start, end: Date.now(), scheduledFor: payload.scheduledFor });
          calls.set(payload.scheduleId, list);
          res.writeHead(204).end();
        }, holdMs);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    host = await startE2eHost({
      env: {
        ...quietTimers,
        // Runs every second overlap a 2.5 s webhook; the floor for function-level crons would refuse them.
        TALLYHO_SCHEDULES_MIN_CRON_INTERVAL_SECONDS: '1',
        NODE_EXTRA_CA_CERTS: caFile,
        TALLYHO_SCHEDULES_WEBHOOK_ALLOWED_HOSTS: `localhost:${port}`,
        TALLYHO_SCHEDULES_WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true',
      },
    });
    s = api(host);
  });
  afterAll(async () => {
    await host.stop();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const overlapping = (list: { start: number; end: number }[]): boolean =>
    list.some((a, i) => list.some((b, j) => i !== j && a.start < b.end && b.start < a.end));
  /** Each webhook call with the one that started next. */
  const consecutive = (list: Call[]): [Call, Call][] => {
    const sorted = [...list].sort((a, b) => a.start - b.start);
    return sorted.slice(1).map((after, i) => [sorted[i] as Call, after]);
  };

  ownHostTest(
    'skip drops fires during a run, bufferOne holds one and runs it next, allow runs them side by side',
    async () => {
      const ids = { skip: unique('ov-skip'), bufferOne: unique('ov-buffer'), allow: unique('ov-allow') };
      for (const [overlap, id] of Object.entries(ids)) {
        body(
          await s.create({
            id,
            cron: '* * * * * *',
            overlap,
            catchUp: 'none',
            target: { type: 'webhook', url: `https://localhost:${port}/hook` },
          }),
          201,
        );
      }
      // Until every lower bound asserted below has been seen: at least two 2.5 s runs of `skip`, a held
      // fire of `bufferOne`, overlapping runs of `allow` (up to 40 s: a fresh host's first fire came 8 s
      // late once in a CI run). The bounds only grow while the fires go on, so stopping then loses nothing.
      const heldOver = (list: Call[]) => consecutive(list).filter(([before, after]) => Date.parse(after.scheduledFor) <= before.end - 1000);
      const skippedForOverlap = (x: Schedule) => x.runs.filter((r) => r.outcome === 'skipped' && r.reason === 'overlap').length;
      const heldRuns = (x: Schedule) =>
        ran(x).filter((r) => r.startedAt !== undefined && Date.parse(r.startedAt) - Date.parse(r.at) >= 1000);
      await waitUntil(
        'each overlap policy at work',
        async () => {
          const [skip, buffer, allow] = await Promise.all([ids.skip, ids.bufferOne, ids.allow].map(async (id) => (await s.get(id)).body));
          if (skip === undefined || buffer === undefined || allow === undefined) return undefined;
          const seen =
            ran(skip).length >= 2 &&
            skippedForOverlap(skip) >= 2 &&
            heldOver(calls.get(ids.bufferOne) ?? []).length >= 1 &&
            heldRuns(buffer).length >= 1 &&
            skippedForOverlap(buffer) >= 1 &&
            overlapping(calls.get(ids.allow) ?? []) &&
            ran(allow).length > ran(skip).length;
          return seen ? true : undefined;
        },
        40_000,
        500,
      );
      for (const id of Object.values(ids)) body(await s.pause(id), 200);
      for (const id of Object.values(ids)) {
        await until(
          `${id} idle`,
          () => s.get(id),
          (r) => !r.body.runs.some((x) => x.outcome === 'running'),
          15_000,
        );
      }
      const view = async (id: string) => (await s.get(id)).body;
      const skip = await view(ids.skip);
      const buffer = await view(ids.bufferOne);
      const allow = await view(ids.allow);

      // skip: never two runs at once, and fires during a run were recorded as skipped.
      expect(overlapping(calls.get(ids.skip) ?? [])).toBe(false);
      expect(ran(skip).length).toBeGreaterThanOrEqual(2);
      expect(skippedForOverlap(skip)).toBeGreaterThanOrEqual(2);
      expect(ran(skip).every((r) => r.outcome === 'succeeded')).toBe(true);
      // Each run is the newest fire when the schedule learnt the run before had ended, so it came due
      // less than one cron interval before that end (however loaded the machine): nothing was held.
      expect(heldOver(calls.get(ids.skip) ?? [])).toEqual([]);

      // bufferOne: never two at once; a fire that came due early in a run is held and is the very next
      // run (no fresher fire runs before it), although the run it waited for ended a second or more after its time.
      const bufferCalls = calls.get(ids.bufferOne) ?? [];
      expect(overlapping(bufferCalls)).toBe(false);
      expect(heldOver(bufferCalls).length).toBeGreaterThanOrEqual(1);
      expect(heldRuns(buffer).length).toBeGreaterThanOrEqual(1);
      expect(buffer.runs.some((r) => r.outcome === 'skipped' && r.reason === 'overlap')).toBe(true);

      // allow: runs overlap and no fire was skipped.
      expect(overlapping(calls.get(ids.allow) ?? [])).toBe(true);
      expect(allow.runs.some((r) => r.outcome === 'skipped')).toBe(false);
      expect(ran(allow).length).toBeGreaterThan(ran(skip).length);
      for (const id of Object.values(ids)) body(await s.cancel(id), 200);
    },
    60_000,
  );
});
