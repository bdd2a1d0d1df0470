/**
 * A release's actions fanned out by the instance that made it (shared/gates/fanOut.ts), under a lease
 * the release orchestration sweeps after: on Azurite, every action is performed and its outcome
 * recorded once — when the fan-out finishes (its lease ends cleanly), when storage fails its writes of
 * outcomes or of the lease for a while, and when its instance dies part-way (its lease lapses; the
 * sweep, on another instance, performs exactly what it left, and records nothing twice).
 */
import type { QueueClient } from '@azure/storage-queue';

import { AppError } from '../../../shared/errors';
import { MemoryLogger } from '../../../shared/log';
import { mapLimited } from '../../../shared/mapLimited';
import { ReleaseFanOut } from '../../../shared/gates/fanOut';
import type { GateAction } from '../../../shared/gates/actions';
import type { ReleaseFollowUp } from '../../../shared/gates/messages';
import { fanOutState } from '../../../shared/gates/activities';
import { fanOutLeaseSeconds } from '../../../shared/gates/names';
import type { GateStore } from '../../../shared/gates/store';
import { gateWorld, storage } from './world';

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);
const enqueue = (payload: number): GateAction => ({ type: 'enqueue', payload });
const runs = 120;
const ids = range(runs).map((i) => `r${i}`);

/** The follow-up the release call started (the orchestration's input). */
function followUpOf(world: ReturnType<typeof gateWorld>): ReleaseFollowUp {
  const started = world.durable.started.filter((s) => s.orchestration === 'gateRelease');
  expect(started).toHaveLength(1);
  return started[0]?.input as ReleaseFollowUp;
}

/** How the orchestration sees the fan-out's lease, on a clock `ahead` ms past this one's. */
const leaseState = (world: ReturnType<typeof gateWorld>, ahead = 0) =>
  fanOutState({ store: world.store, now: () => Date.now() + ahead }, { gate: 'g', generation: 1 });

/** The sweep the orchestration runs once the lease ended or lapsed: its batches, over every shard, carrying the release. */
function sweep(follow: ReleaseFollowUp) {
  return {
    gate: follow.gate,
    generation: follow.generation,
    selection: { kind: 'released', shards: [0, 16], from: follow.from },
    confirm: follow,
  } as const;
}

test('the releasing instance performs every action at once under a lease it ends cleanly; the sweep finds nothing left', async () => {
  const world = gateWorld();
  const service = world.instance({}, { directFanOut: true });
  await service.create('g', undefined, { by: 'ops' });
  await mapLimited(ids, 16, (id) => service.startRun('g', id, enqueue(Number(id.slice(1)))));
  expect((await service.release('g', { by: 'alice' })).outcome).toBe('released');
  const follow = followUpOf(world);
  expect(follow.fanOutLeaseSeconds).toBe(fanOutLeaseSeconds);
  await service.gates.fanOuts.settled();
  expect(await leaseState(world)).toEqual({ state: 'ended', clean: true });
  expect(world.logger.events('gates.fanout.done')).toEqual([expect.objectContaining({ gate: 'g', done: runs, failed: 0, retry: 0 })]);
  const views = await mapLimited(ids, 16, (id) => service.runStatus('g', id));
  for (const v of views) expect(v).toMatchObject({ state: 'proceeded', action: { type: 'enqueue', messageId: expect.any(String) } });
  const messages = await world.drainActions();
  expect(messages.map((m) => m.runId).sort()).toEqual([...ids].sort());
  // The orchestration's sweep, after the lease ended: nothing pending, nothing sent again.
  expect(await world.actions(world.instance(), sweep(follow))).toMatchObject({ done: 0, failed: 0, retry: 0 });
  expect(await world.drainActions()).toEqual([]);
});

test('an instance that dies part-way through its fan-out leaves the rest to the sweep: every action performed, each outcome recorded once', async () => {
  const world = gateWorld();
  const real = await storage.queue(world.actionsQueue);
  let sends = 0;
  // The instance dies after 50 sends: every later send never answers, and nothing after it runs.
  const dying = {
    name: real.name,
    sendMessage: (...args: Parameters<QueueClient['sendMessage']>) =>
      ++sends <= 50 ? real.sendMessage(...args) : new Promise(() => undefined),
  } as unknown as QueueClient;
  const doomed = world.instance({}, { directFanOut: true, queue: () => Promise.resolve(dying) });
  await doomed.create('g', undefined, { by: 'ops' });
  await mapLimited(ids, 16, (id) => doomed.startRun('g', id, enqueue(Number(id.slice(1)))));
  expect((await doomed.release('g', { by: 'alice' })).outcome).toBe('released');
  const follow = followUpOf(world);
  const survivor = world.instance();
  while (sends <= 50) await new Promise((r) => setTimeout(r, 20));
  // Written with the release and never ended: once it is past its end the orchestration sweeps.
  expect(await leaseState(world)).toEqual({ state: 'running', seconds: expect.any(Number) });
  expect(await leaseState(world, (fanOutLeaseSeconds + 1) * 1000)).toEqual({ state: 'none' });

  const before = await mapLimited(ids, 16, (id) => survivor.runStatus('g', id));
  const recordedBefore = before.filter((v) => v.action !== null).length;
  expect(recordedBefore).toBeLessThan(runs);
  const swept = await world.actions(survivor, sweep(follow));
  // Recorded once: the sweep records exactly the runs the dead fan-out had not.
  expect(swept).toMatchObject({ done: runs - recordedBefore, failed: 0, retry: 0 });
  const after = await mapLimited(ids, 16, (id) => survivor.runStatus('g', id));
  const messages = await world.drainActions();
  const byRun = new Map<string, number>();
  for (const m of messages) byRun.set(m.runId, (byRun.get(m.runId) ?? 0) + 1);
  // At least once: every run's message is on the queue, and each run's status names a performed action.
  expect([...byRun.keys()].sort()).toEqual([...ids].sort());
  for (const v of after) expect(v).toMatchObject({ state: 'proceeded', action: { type: 'enqueue', messageId: expect.any(String) } });
  expect(await world.actions(survivor, sweep(follow))).toMatchObject({ done: 0, failed: 0, retry: 0 });
});

test('a write of outcomes that storage fails for a while is tried again, a failed lease write is let be: every run recorded once, nothing for the sweep', async () => {
  const world = gateWorld();
  const service = world.instance();
  await service.create('g', undefined, { by: 'ops' });
  await mapLimited(ids, 16, (id) => service.startRun('g', id, enqueue(Number(id.slice(1)))));
  expect((await service.release('g', { by: 'alice' })).outcome).toBe('released');
  // The first two writes of outcomes fail as a timed-out storage request does (retryable); the rest go through.
  let refusals = 2;
  const flaky = Object.create(world.store) as GateStore;
  flaky.recordOutcomes = (gate, items) =>
    refusals-- > 0
      ? Promise.reject(new AppError('DependencyUnavailable', 'Storage is unavailable; try again shortly', { retryAfterSeconds: 2 }))
      : world.store.recordOutcomes(gate, items);
  let leaseWrites = 0;
  flaky.writeFanOut = () => {
    leaseWrites++;
    return Promise.reject(new AppError('DependencyUnavailable', 'Storage is unavailable; try again shortly'));
  };
  const logger = new MemoryLogger();
  const fanOut = new ReleaseFanOut(
    {
      store: flaky,
      confirmRelease: () => Promise.reject(new Error('a fan-out makes no release')),
      effects: {
        queue: () => storage.queue(world.actionsQueue),
        serviceBusSender: () => undefined,
        webhook: { allowed: [], timeoutMs: 1000, maxResponseBytes: 0, maxRedirects: 0, allowPrivateAddresses: false },
        gates: undefined,
        jobs: undefined,
      },
      now: () => Date.now(),
      logger,
    },
    logger,
  );
  fanOut.start({ gate: 'g', generation: 1, from: 1 });
  await fanOut.settled();
  expect(refusals).toBeLessThan(0);
  expect(logger.events('gates.fanout.done')).toEqual([expect.objectContaining({ done: runs, failed: 0, retry: 0 })]);
  expect(logger.events('gates.fanout.failed')).toEqual([]);
  // The lease's end could not be written: it only lets the sweep start once the lease lapses.
  expect(leaseWrites).toBeGreaterThan(0);
  expect(logger.events('gates.fanout.leaseWriteFailed')).toHaveLength(leaseWrites);
  const views = await mapLimited(ids, 16, (id) => service.runStatus('g', id));
  for (const v of views) expect(v).toMatchObject({ state: 'proceeded', action: { type: 'enqueue', messageId: expect.any(String) } });
  expect((await world.drainActions()).map((m) => m.runId).sort()).toEqual([...ids].sort());
  expect(await world.actions(service, sweep(followUpOf(world)))).toMatchObject({ done: 0, failed: 0, retry: 0 });
});
