/**
 * Schedules fire on their time, and only then, on the devhost's virtual clock (hours and days of
 * durable timers in milliseconds): one-offs (also three weeks out, through hourly rechecks),
 * cancels before and racing a fire, pause and resume, and the job and gateRelease targets. (Shared helpers:
 * support/schedules.ts.)
 */
import { setTimeout as sleep } from 'node:timers/promises';

import { describeDevhost, type E2eHost, startE2eHost } from './support/harness';
import { api, body, queueTexts, quietTimers, ran, type Run, type Schedule, until } from './support/schedules';
import { expectProblem, type JsonResponse, requestJson } from './support/http';
import { unique } from './support/names';
import { readAll } from './support/pages';
import { queuesPolledPromptly } from './support/jobs';

describeDevhost('schedules on the virtual clock', () => {
  let host: E2eHost;
  let s: ReturnType<typeof api>;

  beforeAll(async () => {
    // Jobs a schedule submits are worked in real time, so their queues are polled promptly.
    host = await startE2eHost({ virtualClock: true, env: { ...quietTimers, ...queuesPolledPromptly } });
    s = api(host);
  });
  afterAll(async () => {
    await host.dispose();
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
    // About 500 virtual hours, 13 s with the file alone: however long it takes, no budget of its own.
    await s.advanceTo(Date.parse(at) - 86_400_000);
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
  });

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
  });

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
