/**
 * The gate service on Azurite, where its promises are made: conditional writes of the gate row with
 * the rows that change with it. Runs register exactly once and are counted exactly, a limit holds
 * across instances, a release lets go of every run registered before it and of none twice (races with
 * registrations, another release, a reset), a release its caller never wrote is made by what follows
 * it, and a run's status says what happened — a failed action as a code and a reason only.
 */
import type { TableClient } from '@azure/data-tables';

import { mapLimited } from '../../../shared/mapLimited';
import { AppError } from '../../../shared/errors';
import type { JobPort } from '../../../shared/effects/runner';
import type { GateAction } from '../../../shared/gates/actions';
import type { ReleaseFollowUp } from '../../../shared/gates/messages';
import type { RunView } from '../../../shared/gates/reader';
import { holderRowKey } from '../../../shared/gates/waiterShares';
import { until } from '../../support/waits';
import { gateWorld, type GateWorld, RecordingDurable, storage } from './world';

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);
const none: GateAction = { type: 'none' };
const enqueue = (payload: number | string | { shard: number }): GateAction => ({ type: 'enqueue', payload });

async function statuses(world: GateWorld, gate: string, runIds: readonly string[]): Promise<RunView[]> {
  return mapLimited(runIds, 16, (id) => world.instance().runStatus(gate, id));
}

describe('registering runs', () => {
  test('concurrent starts on two instances register each run once and count them exactly', async () => {
    const world = gateWorld();
    const [a, b] = [world.instance(), world.instance()];
    await a.create('g', undefined, { by: 'ops' });
    const started = await Promise.all(range(200).map((i) => (i % 2 === 0 ? a : b).startRun('g', `r${i}`, none)));
    expect(started.every((s) => s.created)).toBe(true);
    expect((await a.describe('g')).waiters).toEqual({ waiting: 200, registered: 200, late: 0, proceeded: 0 });
    const views = await statuses(
      world,
      'g',
      range(200).map((i) => `r${i}`),
    );
    expect(views.every((v) => v.state === 'waiting' && v.generation === 1 && v.proceededAt === null)).toBe(true);
  });

  test('a known run id with the same action is the same run; with another action it is a conflict (409) that changes nothing', async () => {
    const world = gateWorld();
    const service = world.instance();
    await service.create('g', undefined, { by: 'ops' });
    expect(await service.startRun('g', 'w1', enqueue({ shard: 1 }))).toMatchObject({ created: true });
    // The same action with its fields in another order is the same action.
    expect(await world.instance().startRun('g', 'w1', { payload: { shard: 1 }, type: 'enqueue' })).toMatchObject({ created: false });
    await expect(service.startRun('g', 'w1', enqueue({ shard: 2 }))).rejects.toMatchObject({ code: 'Conflict', status: 409 });
    await expect(service.startRun('g', 'w1', none)).rejects.toMatchObject({ code: 'Conflict' });
    // Repeats within one batch of concurrent starts are answered the same way.
    const repeats = await Promise.allSettled([
      service.startRun('g', 'w2', none),
      service.startRun('g', 'w2', none),
      service.startRun('g', 'w2', enqueue(1)),
    ]);
    expect(repeats.map((r) => (r.status === 'fulfilled' ? r.value.created : (r.reason as AppError).code))).toEqual([
      true,
      false,
      'Conflict',
    ]);
    expect((await service.describe('g')).waiters).toMatchObject({ waiting: 2, registered: 2 });
  });

  test('a full generation refuses a start with 429 at once, exactly at the limit, across instances', async () => {
    const world = gateWorld();
    const instances = [world.instance({ maxWaiters: 25 }), world.instance({ maxWaiters: 25 }), world.instance({ maxWaiters: 25 })];
    await instances[0]?.create('g', undefined, { by: 'ops' });
    const outcomes = await Promise.allSettled(
      // Ten callers, none past its share (6 of 25): only the generation's limit refuses.
      range(60).map((i) => (instances[i % 3] as (typeof instances)[number]).startRun('g', `r${i}`, none, `cred:s${i % 10}`)),
    );
    const refused = outcomes.filter((o) => o.status === 'rejected').map((o) => o.reason as AppError);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(25);
    expect(refused).toHaveLength(35);
    for (const err of refused) expect(err).toMatchObject({ code: 'TooManyRequests', status: 429, retryAfterSeconds: 30 });
    expect((await instances[0]?.describe('g'))?.waiters).toMatchObject({ waiting: 25, registered: 25 });
    // After the release nobody waits: late runs are not limited.
    await instances[0]?.release('g', { by: 'ops' });
    expect(await instances[1]?.startRun('g', 'late', none)).toMatchObject({ created: true });
  });

  test("one caller filling its share of a generation's waiting runs cannot refuse another's start, across instances", async () => {
    const world = gateWorld();
    const instances = [world.instance({ maxWaiters: 25 }), world.instance({ maxWaiters: 25 }), world.instance({ maxWaiters: 25 })];
    await instances[0]?.create('g', undefined, { by: 'ops' });
    const via = (i: number) => instances[i % 3] as (typeof instances)[number];
    const [flood, honest] = await Promise.all([
      Promise.allSettled(range(30).map((i) => via(i).startRun('g', `a${i}`, none, 'entra:a'))),
      Promise.allSettled(range(3).map((i) => via(i + 1).startRun('g', `b${i}`, none, 'entra:b'))),
    ]);
    expect(honest.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    // A quarter of 25, at most, for one caller.
    expect(flood.filter((o) => o.status === 'fulfilled')).toHaveLength(6);
    for (const o of flood)
      if (o.status === 'rejected') expect(o.reason).toMatchObject({ code: 'TooManyRequests', status: 429, extra: { share: 6 } });
    expect((await instances[0]?.describe('g'))?.waiters).toMatchObject({ waiting: 9 });
    // After the release nobody waits: a late joiner takes no place, whoever starts it.
    await instances[0]?.release('g', { by: 'ops' });
    expect(await via(1).startRun('g', 'a-late', none, 'entra:a')).toMatchObject({ created: true });
    // The next generation starts every caller at nothing.
    await instances[0]?.reset('g', undefined, { by: 'ops' });
    expect(await via(2).startRun('g', 'a-next', none, 'entra:a')).toMatchObject({ created: true });
  });

  test("a release deletes its generation's waiter counts (and those an earlier release left), and a start racing it loses none", async () => {
    const world = gateWorld();
    const instances = [world.instance({ maxWaiters: 25 }), world.instance({ maxWaiters: 25 })];
    const via = (i: number) => instances[i % 2] as (typeof instances)[number];
    await via(0).create('g', undefined, { by: 'ops' });
    const holds = async (): Promise<Map<string, number>> => {
      const table = await storage.table(world.table);
      const rows = new Map<string, number>();
      for await (const row of table.listEntities<{ n: number }>({
        queryOptions: { filter: `PartitionKey eq 'g' and RowKey ge 'hold-' and RowKey lt 'hold.'` },
      }))
        rows.set(row.rowKey ?? '', row.n);
      return rows;
    };
    await Promise.all(range(4).map((i) => via(i).startRun('g', `a${i}`, none, i % 2 === 0 ? 'entra:a' : 'entra:b')));
    expect([...(await holds()).values()]).toEqual([2, 2]);
    // A stopped instance's leftovers: a count row of an older generation, which only a later release sweeps.
    await (await storage.table(world.table)).createEntity({ partitionKey: 'g', rowKey: holderRowKey(0, 'entra:old'), n: 3 });
    // Starts racing the release: each either waits (and is counted, then swept with the generation) or is late (and counts nowhere).
    const [starts] = await Promise.all([
      Promise.allSettled(range(6).map((i) => via(i).startRun('g', `c${i}`, none, 'entra:c'))),
      via(1).release('g', { by: 'ops' }),
    ]);
    expect(starts.map((s) => s.status)).toEqual(range(6).map(() => 'fulfilled'));
    await until("the released generation's waiter counts are deleted", async () => ((await holds()).size === 0 ? true : undefined), {
      report: async () => `left: ${JSON.stringify([...(await holds())])}`,
    });
    // The next generation counts from nothing, and its own counts are kept until its release.
    await via(0).reset('g', undefined, { by: 'ops' });
    await Promise.all(range(3).map((i) => via(i).startRun('g', `n${i}`, none, 'entra:a')));
    expect([...(await holds()).values()]).toEqual([3]);
    await expect(via(1).startRun('g', 'n-over', none, 'entra:a')).resolves.toMatchObject({ created: true });
    expect([...(await holds()).values()]).toEqual([4]);
  });

  test('a run with a job action is checked by the jobs service first: a refused job registers nothing and names the action field', async () => {
    const world = gateWorld();
    const checked: GateAction[] = [];
    // Stands in for the effects' checks (shared/app/ports.ts gateActionCheck): a job of more than two items is too big.
    const checkAction = (action: GateAction): Promise<void> => {
      checked.push(action);
      if (action.type === 'job' && action.items.length > 2) {
        return Promise.reject(
          new AppError('PayloadTooLarge', 'too many items', { issues: [{ path: 'body.action.items', message: 'at most 2' }] }),
        );
      }
      return Promise.resolve();
    };
    const service = world.instance({}, { checkAction });
    await service.create('g', undefined, { by: 'ops' });
    const tooMany: GateAction = { type: 'job', processor: 'billing', items: [{ id: 'a' }, { id: 'b' }, { id: 'c' }] };
    await expect(service.startRun('g', 'w1', tooMany)).rejects.toMatchObject({
      code: 'PayloadTooLarge',
      issues: [{ path: 'body.action.items', message: 'at most 2' }],
    });
    expect(await world.store.readRun('g', 'w1')).toBeUndefined();
    const fits: GateAction = { type: 'job', processor: 'billing', items: [{ id: 'a' }] };
    await expect(service.startRun('g', 'w1', fits)).resolves.toMatchObject({ created: true });
    expect(checked).toHaveLength(2);
  });

  test('a run start and its status carry no Durable management link', async () => {
    const world = gateWorld();
    const service = world.instance();
    await service.create('g', undefined, { by: 'ops' });
    const started = await service.startRun('g', 'w1', none);
    expect(started).toEqual({ runId: 'w1', instanceId: 'gate:g:run:w1', created: true });
    const status = await service.runStatus('g', 'w1');
    expect(JSON.stringify(status)).not.toMatch(/https?:|Uri|code=/);
    await expect(service.runStatus('g', 'nope')).rejects.toMatchObject({ code: 'NotFound' });
  });

  test('a start on a missing gate is a 404 and registers nothing', async () => {
    const world = gateWorld();
    await expect(world.instance().startRun('nope', 'r', none)).rejects.toMatchObject({ code: 'NotFound' });
    expect(await world.store.readRun('nope', 'r')).toBeUndefined();
  });
});

describe('releasing', () => {
  test('registrations racing a release: every run is registered before it (and let go by it) or after it (late), none lost, none twice', async () => {
    const world = gateWorld();
    const [a, b] = [world.instance(), world.instance()];
    await a.create('g', undefined, { by: 'ops' });
    const starts = range(300).map((i) => (i % 2 === 0 ? a : b).startRun('g', `r${i}`, none));
    const released = await new Promise((r) => setTimeout(r, 20)).then(() => b.release('g', { by: 'alice' }));
    await Promise.all(starts);
    expect(released.outcome).toBe('released');
    const gate = await a.describe('g');
    expect(gate.waiters.registered + gate.waiters.late).toBe(300);
    expect(gate.waiters).toMatchObject({ waiting: 0, proceeded: 300 });
    const views = await statuses(
      world,
      'g',
      range(300).map((i) => `r${i}`),
    );
    expect(views.filter((v) => !v.late)).toHaveLength(gate.waiters.registered);
    for (const v of views) {
      expect(v).toMatchObject({ state: 'proceeded', generation: 1, release: { generation: 1, by: 'alice', at: gate.release?.at } });
      expect(v.proceededAt).toBe(v.late ? v.registeredAt : gate.release?.at);
    }
  });

  test('two concurrent releases on two instances release once: the same who and when for both, one release and one audit record', async () => {
    const world = gateWorld();
    const [a, b] = [world.instance(), world.instance()];
    await a.create('g', undefined, { by: 'ops' });
    await a.startRun('g', 'r', enqueue(1));
    const answers = await Promise.all([a.release('g', { by: 'alice' }), b.release('g', { by: 'bob' })]);
    expect(answers.map((x) => x.outcome).sort()).toEqual(['alreadyReleased', 'released']);
    const [first, second] = answers.map((x) => ('gate' in x ? x.gate.release : undefined));
    expect(second).toEqual(first);
    expect((await world.audit.list('g', { maxPageSize: 10 })).items.filter((r) => r.kind === 'release')).toHaveLength(1);
    // One follow-up orchestration for the generation, started before its release was written.
    expect(world.durable.started.filter((s) => s.orchestration === 'gateRelease').map((s) => s.instanceId)).toEqual(['gate:g:release:1']);
  });

  test('a reset racing a release: the runs proceed once, with whichever generation released them', async () => {
    const world = gateWorld();
    const [a, b] = [world.instance(), world.instance()];
    await a.create('g', undefined, { by: 'ops' });
    await Promise.all(range(20).map((i) => a.startRun('g', `r${i}`, none)));
    const [released, reset] = await Promise.all([a.release('g', { by: 'alice' }), b.reset('g', undefined, { by: 'ops' })]);
    expect(reset.outcome).toBe('reset');
    const gate = await a.describe('g');
    const views = await statuses(
      world,
      'g',
      range(20).map((i) => `r${i}`),
    );
    if (gate.generation === 2 && gate.state === 'released') {
      // The reset went first (carrying the runs), then the release retried on generation 2.
      expect(reset.carried).toBe(20);
      expect(views.every((v) => v.state === 'proceeded' && v.generation === 2)).toBe(true);
    } else {
      // The release went first; the reset then opened generation 2 with nobody waiting.
      expect(released.outcome).toBe('released');
      expect(gate).toMatchObject({ generation: 2, state: 'closed', waiters: { waiting: 0 } });
      expect(views.every((v) => v.state === 'proceeded' && v.generation === 1)).toBe(true);
    }
  });

  test("a release whose caller died after starting what follows it is made by it, with the caller's who and when", async () => {
    const world = gateWorld();
    const service = world.instance();
    await service.create('g', undefined, { by: 'ops' });
    await Promise.all(range(5).map((i) => service.startRun('g', `r${i}`, enqueue(i))));
    const at = new Date().toISOString();
    // What the caller had started before dying: the follow-up, with its release.
    const follow: ReleaseFollowUp = {
      gate: 'g',
      generation: 1,
      at,
      by: 'alice',
      how: 'api',
      announce: false,
      actions: 5,
      from: 1,
      batchSize: 50,
    };
    const first = await world.actions(service, {
      gate: 'g',
      generation: 1,
      selection: { kind: 'released', shards: [0, 16], from: 1 },
      confirm: follow,
    });
    expect(first).toMatchObject({ done: 5, failed: 0, retry: 0 });
    expect(await service.describe('g')).toMatchObject({ state: 'released', release: { at, by: 'alice' } });
    expect((await world.drainActions()).map((m) => m.runId).sort()).toEqual(range(5).map((i) => `r${i}`));
    // Made again (a retried activity): the same release, no action twice.
    const again = await world.actions(service, {
      gate: 'g',
      generation: 1,
      selection: { kind: 'released', shards: [0, 16], from: 1 },
      confirm: follow,
    });
    expect(again).toMatchObject({ done: 0, failed: 0 });
    expect(await world.drainActions()).toEqual([]);
    expect((await world.audit.list('g', { maxPageSize: 10 })).items.filter((r) => r.kind === 'release')).toHaveLength(1);
  });

  test('a stale release (an older generation) makes nothing, and its actions stay with the generation that has them', async () => {
    const world = gateWorld();
    const service = world.instance();
    await service.create('g', undefined, { by: 'ops' });
    await service.startRun('g', 'w', enqueue('x'));
    await service.reset('g', undefined, { by: 'ops' });
    const stale: ReleaseFollowUp = {
      gate: 'g',
      generation: 1,
      at: new Date().toISOString(),
      by: 'ghost',
      how: 'api',
      announce: false,
      actions: 1,
      from: 1,
      batchSize: 50,
    };
    // The orchestration's first step makes no release of a generation the gate moved past (nothing to announce).
    expect(await service.gates.activities.announceRelease(stale)).toBeUndefined();
    expect(
      await world.actions(service, { gate: 'g', generation: 1, selection: { kind: 'released', shards: [0, 16], from: 1 }, confirm: stale }),
    ).toMatchObject({
      done: 0,
    });
    expect(await service.runStatus('g', 'w')).toMatchObject({ state: 'waiting', generation: 2 });
    expect((await service.release('g', { by: 'bob' })).outcome).toBe('released');
    expect(await service.runStatus('g', 'w')).toMatchObject({ state: 'proceeded', generation: 2, release: { by: 'bob' } });
  });
});

describe('actions', () => {
  test("two workers performing the same batch record each run's outcome once", async () => {
    const world = gateWorld();
    const service = world.instance();
    await service.create('g', undefined, { by: 'ops' });
    await Promise.all(range(120).map((i) => service.startRun('g', `r${i}`, enqueue(i))));
    await service.release('g', { by: 'alice' });
    const batch = { gate: 'g', generation: 1, selection: { kind: 'released', shards: [0, 16], from: 1 } } as const;
    const [x, y] = await Promise.all([world.actions(service, batch), world.actions(service, batch)]);
    expect(x.retry + y.retry).toBe(0);
    const views = await statuses(
      world,
      'g',
      range(120).map((i) => `r${i}`),
    );
    for (const v of views) expect(v).toMatchObject({ state: 'proceeded', action: { type: 'enqueue', messageId: expect.any(String) } });
    const messages = await world.drainActions();
    // At least once: every run's message is there, and the one its status names among them.
    expect(new Set(messages.map((m) => m.runId)).size).toBe(120);
    expect(await world.actions(service, batch)).toMatchObject({ done: 0, failed: 0, retry: 0 });
  });

  test('a failed action fails its run with a code and a reason only; a retryable failure leaves it pending until given up', async () => {
    const world = gateWorld();
    const service = world.instance();
    await service.create('g', undefined, { by: 'ops' });
    const job: GateAction = { type: 'job', processor: 'billing', items: [{ id: 'a' }] };
    await service.startRun('g', 'refused', job);
    await service.release('g', { by: 'alice' });
    const batch = { gate: 'g', generation: 1, selection: { kind: 'released', shards: [0, 16], from: 1 } } as const;
    const jobs = (submit: () => Promise<string>): JobPort => ({ submit, status: () => Promise.reject(new Error('not polled')) });
    const unavailable = jobs(() => Promise.reject(new AppError('DependencyUnavailable', 'Storage is unavailable; try again shortly')));
    expect(await world.actions(service, batch, unavailable)).toMatchObject({ retry: 1, lastError: { code: 'DependencyUnavailable' } });
    expect(await service.runStatus('g', 'refused')).toMatchObject({ state: 'proceeded', action: null });

    const conflict = jobs(() =>
      Promise.reject(
        new AppError('Conflict', 'The Idempotency-Key was first used for a different job submission', { internal: 'secret /path' }),
      ),
    );
    expect(await world.actions(service, batch, conflict)).toMatchObject({ failed: 1 });
    const failed = await service.runStatus('g', 'refused');
    expect(failed).toMatchObject({
      state: 'failed',
      action: null,
      failure: { code: 'Conflict', reason: 'The Idempotency-Key was first used for a different job submission' },
    });
    expect(JSON.stringify(failed)).not.toMatch(/secret|\/path|at .*\.js/);

    await service.startRun('g', 'crash', job);
    const crash = jobs(() => Promise.reject(new TypeError('Cannot read properties of undefined (reading "x") at /srv/app.js:1')));
    await world.actions(service, { gate: 'g', generation: 1, selection: { kind: 'late', runIds: ['crash'] } }, crash);
    const crashed = await service.runStatus('g', 'crash');
    expect(crashed.failure).toEqual({ code: 'Internal', reason: 'The job action failed' });
  });

  test('late joiners with an action: what will perform it is started before they register, and performs it once', async () => {
    const world = gateWorld();
    const service = world.instance();
    await service.create('g', undefined, { by: 'ops' });
    await service.release('g', { by: 'alice' });
    await Promise.all([service.startRun('g', 'l1', enqueue(1)), service.startRun('g', 'l2', none)]);
    const late = world.durable.started.filter((s) => s.orchestration === 'gateLateActions');
    expect(late.flatMap((s) => (s.input as { runIds: string[] }).runIds)).toEqual(['l1']);
    expect(await world.actions(service, { gate: 'g', generation: 1, selection: { kind: 'late', runIds: ['l1', 'never'] } })).toMatchObject({
      done: 1,
      missing: ['never'],
    });
    expect(await service.runStatus('g', 'l1')).toMatchObject({ state: 'proceeded', late: true, action: { type: 'enqueue' } });
    expect(await service.runStatus('g', 'l2')).toMatchObject({ state: 'proceeded', late: true, action: { type: 'none' } });
    expect(await world.drainActions()).toEqual([{ gate: 'g', generation: 1, runId: 'l1', payload: 1 }]);
  });

  test("a late joiner's action starts on the Durable client of the request that registers it, on an instance that has served nothing else", async () => {
    const world = gateWorld();
    const admin = world.instance();
    await admin.create('g', undefined, { by: 'ops' });
    await admin.release('g', { by: 'alice' });
    const fresh = world.instance();
    const requests = [new RecordingDurable(), new RecordingDurable()];
    await fresh.gates.commands(requests[0]!).startRun('g', 'a1', enqueue(1), 'cred:submitter');
    await fresh.gates.commands(requests[1]!).startRun('g', 'a2', enqueue(2), 'cred:submitter');
    const late = (d: RecordingDurable) =>
      d.started.filter((s) => s.orchestration === 'gateLateActions').flatMap((s) => (s.input as { runIds: string[] }).runIds);
    expect(requests.map(late)).toEqual([['a1'], ['a2']]);
    expect(late(world.durable)).toEqual([]);
  });
});

describe('generations', () => {
  test('runs carried over closed generations proceed with the release that comes; older runs keep theirs after the gate moves on', async () => {
    const world = gateWorld();
    const service = world.instance();
    await service.create('g', undefined, { by: 'ops' });
    await service.startRun('g', 'carried', none);
    expect(await service.reset('g', undefined, { by: 'ops' })).toMatchObject({ outcome: 'reset', carried: 1, gate: { generation: 2 } });
    await service.startRun('g', 'second', none);
    await service.release('g', { by: 'bob' });
    await service.reset('g', undefined, { by: 'ops' });
    await service.startRun('g', 'third', none);
    expect(await service.describe('g')).toMatchObject({ generation: 3, state: 'closed', waiters: { waiting: 1, registered: 1 } });
    expect(await service.runStatus('g', 'carried')).toMatchObject({
      state: 'proceeded',
      generation: 2,
      release: { generation: 2, by: 'bob' },
    });
    expect(await service.runStatus('g', 'second')).toMatchObject({ state: 'proceeded', generation: 2 });
    expect(await service.runStatus('g', 'third')).toMatchObject({ state: 'waiting', generation: 3 });
    const kinds = (await world.audit.list('g', { maxPageSize: 10 })).items.map((r) => `${r.generation}:${r.kind}`);
    expect(kinds).toEqual(['1:create', '2:reset', '2:release', '3:reset']);
  });

  test('concurrent resets of one generation make one new generation', async () => {
    const world = gateWorld();
    const service = world.instance();
    await service.create('g', undefined, { by: 'ops' });
    // Both instances read generation 1 before either writes: without that hold, a busy machine can
    // finish one reset before the other reads, and the second then rightly resets generation 2.
    let arrived = 0;
    let letGo = (): void => undefined;
    const bothRead = new Promise<void>((resolve) => (letGo = resolve));
    /** An instance's table client whose first read of the gate row answers once both instances have read it. */
    const holdingFirstGateRead = (): ((client: TableClient) => TableClient) => {
      let first = true;
      return (client) =>
        new Proxy(client, {
          get(target, key, receiver) {
            const value: unknown = Reflect.get(target, key, receiver);
            if (key !== 'getEntity' || typeof value !== 'function') return value;
            return async (...args: unknown[]) => {
              const row: unknown = await Reflect.apply(value, target, args);
              if (first && args[1] === 'gate') {
                first = false;
                if (++arrived === 2) letGo();
                await bothRead;
              }
              return row;
            };
          },
        });
    };
    const answers = await Promise.all([
      world.instance({}, { table: holdingFirstGateRead() }).reset('g', undefined, { by: 'a' }),
      world.instance({}, { table: holdingFirstGateRead() }).reset('g', undefined, { by: 'b' }),
    ]);
    expect(answers.map((a) => a.outcome).sort()).toEqual(['alreadyReset', 'reset']);
    expect(answers.map((a) => a.gate.generation)).toEqual([2, 2]);
  });

  test('a create or reset with a schedule starts its orchestration before the change, named by generation and schedule', async () => {
    const world = gateWorld();
    const service = world.instance();
    const at = new Date(Date.now() + 3600_000).toISOString();
    await service.create('g', at, { by: 'ops' });
    expect(world.durable.started.map((s) => s.instanceId)).toEqual([`gate:g:gen:1:${Date.parse(at)}`]);
    expect(await world.audit.opened('g', 1, 'create', at)).toBe('opened');
    expect(await world.audit.opened('g', 1, 'create', null)).toBe('other');
    expect(await world.audit.opened('g', 2, 'reset', null)).toBe('absent');
    await service.reset('g', undefined, { by: 'ops' });
    // The reset cancels the closed generation's schedule.
    expect(world.durable.events).toEqual([{ instanceId: `gate:g:gen:1:${Date.parse(at)}`, event: 'GateScheduleCancelled' }]);
  });
});

describe('Durable failures', () => {
  test("a command passes the Durable adapter's judgement on: the backend unavailable stays a 503, a bug is not turned into one", async () => {
    const world = gateWorld();
    const { gates } = world.instance();
    const failing = (err: Error): RecordingDurable => Object.assign(new RecordingDurable(), { startNew: () => Promise.reject(err) });
    const releaseAt = new Date(Date.now() + 3_600_000).toISOString();
    const unavailable = new AppError('DependencyUnavailable', 'The Durable Functions backend is unavailable; try again shortly');
    await expect(gates.commands(failing(unavailable)).create('g1', releaseAt, { by: 'ops' })).rejects.toBe(unavailable);
    const bug = new TypeError('a bug in the adapter');
    await expect(gates.commands(failing(bug)).create('g2', releaseAt, { by: 'ops' })).rejects.toBe(bug);
    // Nothing was written: the orchestration that follows a change is started before the change.
    expect(await gates.reader.read('g1')).toBeUndefined();
    expect(await gates.reader.read('g2')).toBeUndefined();
  });
});
