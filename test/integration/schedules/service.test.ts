/**
 * The schedules use-cases and activities on Azurite (a recording engine stands in for Durable
 * Functions): the create path and its crash window, idempotency, 400s that write nothing, and a
 * fire racing a cancel on one row.
 */
import { QueueServiceClient } from '@azure/storage-queue';

import { isAppError } from '../../../shared/errors';
import { pendingGraceMs } from '../../../shared/schedules/service';
import { appErrorOf } from '../../support/appErrors';
import { scheduleHarness } from '../../support/schedules';
import { runStorage } from '../../support/storageAccounts';
import { creatorOf } from '../../../shared/schedules/creator';

/** The creator every schedule of these tests is recorded with. */
const tester = creatorOf('tester', 'function', 'key:shared');

const queueTarget = (queue: string, message: unknown = 'hi') => ({ type: 'queueMessage' as const, queue, message: message as string });
/** One of each family a schedule must never write to (finding 3), refused even with an allow-list of `*`. */
const reservedQueues = [
  'jobs-work-0',
  'jobs-work-7',
  'jobs-work-12',
  'custom-jobs-3',
  'jobs-work-0-poison',
  'jobs-work-r-0',
  'jobs-work-r-billing',
  'jobs-work-x-billing',
  'custom-jobs-r-2',
  'anything-poison',
  'gate-actions',
  'azure-webjobs-blobtrigger-tallyho',
  'tallyho-control-00',
  'otherhub-control-03',
  'tallyho-workitems',
];

const unique = (prefix: string): string => `${prefix}-${Math.random().toString(16).slice(2, 10)}`;

async function queueLength(queue: string): Promise<number> {
  const client = QueueServiceClient.fromConnectionString(runStorage()).getQueueClient(queue);
  if (!(await client.exists())) return 0;
  return (await client.peekMessages({ numberOfMessages: 32 })).peekedMessageItems.length;
}

describe('creating schedules', () => {
  it('writes the index row, starts the orchestration under the schedule id (whose first step activates it) and answers the next fire', async () => {
    const h = scheduleHarness();
    const { created, view } = await h.service.create(
      {
        id: 'daily',
        cron: '0 30 9 * * *',
        timeZone: 'Europe/Berlin',
        target: queueTarget('app-out'),
      },
      tester,
    );
    expect(created).toBe(true);
    expect(view).toMatchObject({
      id: 'daily',
      state: 'pending',
      nextFireAt: '2027-01-01T08:30:00.000Z',
      runCount: 0,
      overlap: 'skip',
      catchUp: { policy: 'once' },
    });
    expect([...h.engine.started.keys()]).toEqual(['daily']);
    expect(h.engine.started.get('daily')).toMatchObject({
      id: 'daily',
      cursor: '',
      mode: 'active',
      definition: { timing: { kind: 'cron', timeZone: 'Europe/Berlin' } },
    });
    const snapshot = await h.activities.checkpoint({
      scheduleId: 'daily',
      now: '2027-01-01T00:00:00.000Z',
      nextFireAt: '2027-01-01T08:30:00.000Z',
      records: [],
    });
    expect(snapshot.state).toBe('active');
    expect((await h.table.read('daily'))?.state).toBe('active');
  });

  it('a crash between the index row and the start leaves a pending row that a retry of the request completes', async () => {
    const h = scheduleHarness();
    const request = { id: 'retry-me', at: '2027-01-01T05:00:00Z', target: queueTarget('app-out') };
    h.engine.failStarts = 1;
    await expect(h.service.create(request, tester)).rejects.toThrow(/unavailable/);
    expect((await h.table.read('retry-me'))?.state).toBe('pending');
    expect(h.engine.started.size).toBe(0);
    const again = await h.service.create(request, tester);
    expect(again).toMatchObject({ created: false, view: { state: 'pending' } });
    expect([...h.engine.started.keys()]).toEqual(['retry-me']);
    // Once active, the same request again changes nothing (and starts nothing).
    await h.activities.checkpoint({ scheduleId: 'retry-me', now: '2027-01-01T00:00:00.000Z', nextFireAt: null, records: [] });
    expect(await h.service.create(request, tester)).toMatchObject({ created: false, view: { state: 'active' } });
    expect(h.engine.started.size).toBe(1);
  });

  it('the same id with the same definition is idempotent (key order and zone spelling aside); another definition is a 409', async () => {
    const h = scheduleHarness();
    await h.service.create(
      { id: 'same', cron: '0 0 9 * * *', timeZone: 'America/New_York', target: queueTarget('app-out', { a: 1, b: 2 }) },
      tester,
    );
    const again = await h.service.create(
      {
        id: 'same',
        timeZone: 'US/Eastern',
        cron: '0  0 9 * * *',
        target: queueTarget('app-out', { b: 2, a: 1 }),
      },
      tester,
    );
    expect(again.created).toBe(false);
    expect(
      await appErrorOf(
        h.service.create({ id: 'same', cron: '0 0 10 * * *', timeZone: 'America/New_York', target: queueTarget('app-out') }, tester),
      ),
    ).toMatchObject({
      code: 'Conflict',
      status: 409,
    });
  });

  it.each([
    [
      'a webhook off the allow-list',
      { at: '2027-01-01T05:00:00Z', target: { type: 'webhook', url: 'https://evil.example.com/x' } },
      'body.target.url',
    ],
    [
      'a plain-http webhook',
      { at: '2027-01-01T05:00:00Z', target: { type: 'webhook', url: 'http://hooks.example.com/x' } },
      'body.target.url',
    ],
    [
      'a webhook at a private IP',
      { at: '2027-01-01T05:00:00Z', target: { type: 'webhook', url: 'https://10.0.0.5/x' } },
      'body.target.url',
    ],
    ['a task hub queue', { at: '2027-01-01T05:00:00Z', target: queueTarget('tallyho-control-00') }, 'body.target.queue'],
    ['an app queue', { at: '2027-01-01T05:00:00Z', target: queueTarget('gate-actions') }, 'body.target.queue'],
    ...reservedQueues.map(
      (queue) => [`the reserved queue ${queue}`, { at: '2027-01-01T05:00:00Z', target: queueTarget(queue) }, 'body.target.queue'] as const,
    ),
    ['a cron that never fires again', { cron: '0 0 0 31 4 *' }, 'body.cron'],
  ] as const)('refuses %s with a 400 and writes nothing', async (_name, body, path) => {
    const h = scheduleHarness({
      env: {
        TALLYHO_SCHEDULES_WEBHOOK_ALLOWED_HOSTS: 'hooks.example.com,10.0.0.5',
        TALLYHO_SCHEDULES_ALLOWED_QUEUES: '*',
        TALLYHO_JOBS_QUEUE_PREFIX: 'custom-jobs',
      },
    });
    const id = unique('refused');
    const request = { id, target: queueTarget('app-out'), ...body } as Parameters<typeof h.service.create>[0];
    const problem = await appErrorOf(h.service.create(request, tester));
    expect(problem).toMatchObject({ code: 'ValidationFailed', status: 400 });
    expect(problem.issues.map((i) => i.path)).toContain(path);
    expect(await h.table.read(id)).toBeUndefined();
    expect(h.engine.started.size).toBe(0);
  });
});

describe('the queueMessage allow-list', () => {
  it('by default only app-* queues are targets', async () => {
    const h = scheduleHarness();
    const refused = await appErrorOf(
      h.service.create({ id: unique('payroll'), at: '2027-01-01T05:00:00Z', target: queueTarget('payroll') }, tester),
    );
    expect(refused.issues).toEqual([
      { path: 'body.target.queue', message: 'This queue is not allowed (TALLYHO_SCHEDULES_ALLOWED_QUEUES)' },
    ]);
    const id = unique('app-payroll');
    await h.service.create({ id, at: '2027-01-01T05:00:00Z', target: queueTarget('app-payroll') }, tester);
    expect(await h.table.read(id)).toBeDefined();
  });

  it('an allow-list entry that covers a reserved queue does not make it a target', async () => {
    const h = scheduleHarness({ env: { TALLYHO_SCHEDULES_ALLOWED_QUEUES: 'jobs-*,gate-actions,azure-*' } });
    for (const queue of ['jobs-work-0', 'jobs-work-0-poison', 'gate-actions', 'azure-webjobs-x']) {
      const refused = await appErrorOf(
        h.service.create({ id: unique('r'), at: '2027-01-01T05:00:00Z', target: queueTarget(queue) }, tester),
      );
      expect({ queue, path: refused.issues[0]?.path, message: refused.issues[0]?.message }).toEqual({
        queue,
        path: 'body.target.queue',
        message: expect.stringMatching(/^Not a target: /),
      });
    }
  });
});

describe('the reconciler', () => {
  it('completes creates left pending for longer than the grace period, and leaves Service Bus deliveries alone', async () => {
    const h = scheduleHarness();
    h.engine.failStarts = 1;
    await expect(
      h.service.create({ id: 'cut-short', at: '2027-01-01T05:00:00Z', target: queueTarget('app-out') }, tester),
    ).rejects.toThrow();
    const row = await h.table.read('cut-short');
    expect(row?.state).toBe('pending');
    if (row === undefined) return;
    // A Service Bus delivery whose handle was never stored (the process died after scheduling).
    await h.table.create({ ...row, id: 'sb-pending', mode: 'serviceBusScheduled' });
    await h.clock.advance(pendingGraceMs + 1000);
    // Too recent to touch: its create may still be under way.
    await h.table.create({ ...row, id: 'fresh', createdAt: new Date(h.clock.now()).toISOString() });
    expect(await h.service.reconcilePending(pendingGraceMs)).toEqual({ started: 1, left: 1 });
    // Started, not the others (its orchestration's first step will mark it active).
    expect([...h.engine.started.keys()]).toEqual(['cut-short']);
    expect((await h.table.read('sb-pending'))?.state).toBe('pending');
  });
});

describe('the reconciler of lost orchestrations', () => {
  it('restarts the orchestration of an overdue row when it is gone, failed or terminated, leaves a running one, and reads no status of a row on time', async () => {
    const h = scheduleHarness();
    const hourly = { cron: '0 0 * * * *', target: queueTarget(unique('app-out')) };
    for (const id of ['gone', 'failed', 'terminated', 'running']) await h.service.create({ id, ...hourly }, tester);
    await h.service.create({ id: 'on-time', cron: '0 0 0 * * *', target: queueTarget(unique('app-out')) }, tester);
    const activate = (scheduleId: string, nextFireAt: string) =>
      h.activities.checkpoint({ scheduleId, now: '2027-01-01T00:00:00.000Z', nextFireAt, records: [] });
    for (const id of ['gone', 'failed', 'terminated', 'running']) await activate(id, '2027-01-01T01:00:00.000Z');
    await activate('on-time', '2027-01-02T00:00:00.000Z');
    // `gone` ran its 01:00 fire (run 1) before its orchestration vanished.
    const run = await h.activities.run({
      scheduleId: 'gone',
      runId: 'gone#1',
      fire: { at: '2027-01-01T01:00:00.000Z', kind: 'scheduled' },
      now: '2027-01-01T01:00:00.000Z',
      nextFireAt: '2027-01-01T02:00:00.000Z',
    });
    expect(run.outcome).toBe('succeeded');
    await h.service.pause('terminated');
    const before = new Map(h.engine.started);
    h.engine.started.delete('gone');
    h.engine.statuses.set('failed', 'Failed');
    h.engine.statuses.set('terminated', 'Terminated');

    // Within the misfire grace of 01:00 (02:00 for `gone`): nothing is overdue yet, nothing is read.
    await h.clock.advance(3600_000 + h.settings.misfireGraceSeconds * 1000 - 1000);
    expect(await h.service.reconcileOverdue()).toEqual({ restarted: 0, alive: 0 });
    expect(h.engine.statusReads).toEqual([]);

    await h.clock.advance(3600_000 + 2000);
    expect(await h.service.reconcileOverdue()).toEqual({ restarted: 3, alive: 1 });
    expect([...h.engine.statusReads].sort()).toEqual(['failed', 'gone', 'running', 'terminated']);
    // The running one was left as it was; the others start over at their overdue fire, runs numbered on.
    expect(h.engine.started.get('running')).toBe(before.get('running'));
    expect(h.engine.started.get('on-time')).toBe(before.get('on-time'));
    expect(h.engine.started.get('gone')).toMatchObject({ id: 'gone', mode: 'active', cursor: '2027-01-01T01:59:59.999Z', runs: 1 });
    expect(h.engine.started.get('failed')).toMatchObject({ cursor: '2027-01-01T00:59:59.999Z', runs: 0 });
    expect(h.engine.started.get('terminated')).not.toBe(before.get('terminated'));
    expect(h.logger.events('schedules.reconcile.restarted')).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ schedule: 'gone', runtimeStatus: 'missing' }),
        expect.objectContaining({ schedule: 'failed', runtimeStatus: 'Failed' }),
        expect.objectContaining({ schedule: 'terminated', state: 'paused', runtimeStatus: 'Terminated' }),
      ]),
    );
  });
});

describe('control requests on the index', () => {
  it('pause makes the index refuse a scheduled fire (nothing runs) but not a trigger', async () => {
    const h = scheduleHarness();
    const queue = unique('app-out');
    await h.service.create({ id: 'p', cron: '0 * * * * *', target: queueTarget(queue) }, tester);
    await h.service.pause('p');
    const fire = { at: '2027-01-01T00:01:00.000Z', kind: 'scheduled' as const };
    expect(await h.activities.run({ scheduleId: 'p', runId: 'p#1', fire, now: fire.at, nextFireAt: null })).toMatchObject({
      outcome: 'refused',
      snapshot: { state: 'paused', settled: [{ runId: 'p#1', outcome: 'refused' }] },
    });
    expect(await queueLength(queue)).toBe(0);
    const { triggerId } = await h.service.trigger('p');
    const snapshot = await h.activities.checkpoint({ scheduleId: 'p', now: fire.at, nextFireAt: null, records: [] });
    expect(snapshot.triggers.map((t) => t.id)).toEqual([triggerId]);
    const trigger = { at: fire.at, kind: 'trigger' as const, triggerId };
    expect(await h.activities.run({ scheduleId: 'p', runId: 'p#2', fire: trigger, now: fire.at, nextFireAt: null })).toMatchObject({
      outcome: 'succeeded',
    });
    expect(await queueLength(queue)).toBe(1);
    expect((await h.service.get('p', 'admin')).pendingTriggers).toBe(0);
  });

  it('more than ten waiting triggers is a 429', async () => {
    const h = scheduleHarness();
    await h.service.create({ id: 't', at: '2027-06-01T00:00:00Z', target: queueTarget('app-out') }, tester);
    for (let i = 0; i < 10; i++) await h.service.trigger('t');
    expect(await appErrorOf(h.service.trigger('t'))).toMatchObject({ code: 'TooManyRequests', status: 429 });
  });

  it('a fire racing a cancel on one row ends with exactly one of them', async () => {
    const h = scheduleHarness();
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const id = `race-${i}`;
        const queue = unique('app-race');
        await h.service.create({ id, at: '2027-01-01T00:00:30Z', target: queueTarget(queue, id) }, tester);
        const fire = { at: '2027-01-01T00:00:30.000Z', kind: 'scheduled' as const };
        const [run, cancel] = await Promise.all([
          h.activities.run({ scheduleId: id, runId: `${id}#1`, fire, now: fire.at, nextFireAt: null }),
          h.service.cancel(id).then(
            () => 'cancelled' as const,
            (err: unknown) => (isAppError(err) ? err.status : 500),
          ),
        ]);
        return { run: run.outcome, cancel, messages: await queueLength(queue), state: (await h.service.get(id, 'admin')).state };
      }),
    );
    for (const o of outcomes) {
      if (o.cancel === 'cancelled') expect(o).toEqual({ run: 'refused', cancel: 'cancelled', messages: 0, state: 'cancelled' });
      else expect(o).toEqual({ run: 'succeeded', cancel: 409, messages: 1, state: 'completed' });
    }
  });
});
