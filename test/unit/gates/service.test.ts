/**
 * The gate service against a scripted Durable client: reads before it writes, collapses onto running
 * instances, retries a superseded release, waits bounded, refuses bad schedules before starting anything.
 */
import { ManualClock } from '../../../shared/clock';
import { AppError } from '../../../shared/errors';
import type { GateAction } from '../../../shared/gates/actions';
import { gateActionCheck } from '../../../shared/app/ports';
import type { DurableClient, InstanceStatus } from '../../../shared/durable/client';
import type { GateRecord } from '../../../shared/gates/operations';
import { checkReleaseAt, GateService } from '../../../shared/gates/service';
import { GateWatchHub } from '../../../shared/gates/watchHub';
import { MemoryLogger } from '../../../shared/log';
import { record, settings } from './fixtures';

class ScriptedDurable implements DurableClient {
  gate: GateRecord | undefined;
  readonly statuses = new Map<string, InstanceStatus>();
  readonly started: { orchestration: string; instanceId: string; input: unknown }[] = [];
  readonly events: { instanceId: string; event: string }[] = [];
  /** What "running" an orchestration does to the scripted world. */
  onStart: (orchestration: string, instanceId: string, input: unknown) => void = () => undefined;

  reads = 0;

  signal(): Promise<void> {
    return Promise.reject(new Error('the gate service signals no entity'));
  }
  readState<T>(): Promise<T | undefined> {
    this.reads++;
    return Promise.resolve(this.gate as T | undefined);
  }
  startNew(orchestration: string, instanceId: string, input: unknown): Promise<void> {
    if (this.statuses.get(instanceId)?.runtimeStatus === 'Running') return Promise.reject(new Error('already exists'));
    this.started.push({ orchestration, instanceId, input });
    this.statuses.set(instanceId, { runtimeStatus: 'Running', customStatus: null, output: null });
    this.onStart(orchestration, instanceId, input);
    return Promise.resolve();
  }
  getStatus(instanceId: string): Promise<InstanceStatus | undefined> {
    return Promise.resolve(this.statuses.get(instanceId));
  }
  raiseEvent(instanceId: string, event: string): Promise<'delivered' | 'gone'> {
    this.events.push({ instanceId, event });
    return Promise.resolve(this.statuses.has(instanceId) ? 'delivered' : 'gone');
  }
  managementLinks(instanceId: string, url: URL) {
    return { id: instanceId, statusQueryGetUri: `${url.origin}/status/${instanceId}` };
  }
}

function setup() {
  const clock = new ManualClock(Date.parse('2026-01-01T00:00:00.000Z'));
  const durable = new ScriptedDurable();
  const logger = new MemoryLogger();
  const hub = new GateWatchHub(() => Promise.resolve(undefined), { intervalMs: 1000, clock, logger });
  let ids = 0;
  // Stands in for the jobs service's checks: refuses a job with more than two items, as a 413 naming the field.
  const checked: unknown[] = [];
  const jobs = {
    check(request: { items: readonly unknown[] }): Promise<void> {
      checked.push(request);
      if (request.items.length > 2) {
        return Promise.reject(
          new AppError('PayloadTooLarge', 'too many items', { issues: [{ path: 'body.items', message: 'at most 2' }] }),
        );
      }
      return Promise.resolve();
    },
  };
  // The app's check of a run's action (shared/app/ports.ts), with these jobs checks.
  const checkAction = gateActionCheck({
    queues: { allowed: [], jobsQueuePrefix: 'jobs-work' },
    serviceBusEntities: [],
    serviceBusConfigured: false,
    webhook: { allowed: [], allowPrivateAddresses: false },
    gatesAvailable: true,
    jobs,
  });
  const known = new Set<string>();
  const service = new GateService({ durable: () => durable, hub, settings, clock, logger, newId: () => `id${++ids}`, checkAction, known });
  const answer = (instanceId: string, customStatus: unknown) =>
    durable.statuses.set(instanceId, { runtimeStatus: 'Running', customStatus, output: null });
  return { clock, durable, service, answer, checked };
}

/** Lets a polling loop run while the manual clock moves. */
async function drive<T>(clock: ManualClock, work: Promise<T>): Promise<T> {
  let settled = false;
  void work.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let i = 0; i < 400 && !settled; i++) await clock.advance(10);
  return work;
}

describe('checkReleaseAt', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  test('normalises a future time to UTC and accepts none', () => {
    expect(checkReleaseAt('2026-01-01T02:00:00+01:00', now)).toBe('2026-01-01T01:00:00.000Z');
    expect(checkReleaseAt(undefined, now)).toBeNull();
  });
  test.each([['2025-12-31T23:59:59Z'], ['2026-01-01T00:00:00Z'], ['2027-01-03T00:00:00Z']])(
    'refuses %s with a 400 naming body.releaseAt',
    (at) => {
      try {
        checkReleaseAt(at, now);
        throw new Error('accepted');
      } catch (err) {
        expect(err).toBeInstanceOf(AppError);
        expect(err).toMatchObject({ code: 'ValidationFailed', issues: [{ path: 'body.releaseAt' }] });
      }
    },
  );
});

describe('GateService', () => {
  test('create starts the generation orchestration and answers what it reports', async () => {
    const { clock, durable, service, answer } = setup();
    durable.onStart = (_o, id) => answer(id, { opened: { outcome: 'created', gate: { name: 'g', generation: 1, releaseAt: null } } });
    const result = await drive(clock, service.create('g', undefined, { by: 'ops' }));
    expect(result).toMatchObject({ created: true, gate: { generation: 1 } });
    expect(durable.started).toEqual([
      {
        orchestration: 'gateGeneration',
        instanceId: 'gate:g:gen:1',
        input: { gate: 'g', kind: 'create', releaseAt: null, notifyBatchSize: 50, by: 'ops' },
      },
    ]);
  });

  test('create of an existing gate starts nothing; a different releaseAt is a 409', async () => {
    const { durable, service } = setup();
    durable.gate = record({ releaseAt: '2026-01-02T00:00:00.000Z' });
    await expect(service.create('g', undefined, { by: 'ops' })).resolves.toMatchObject({ created: false });
    await expect(service.create('g', '2026-01-02T00:00:00Z', { by: 'ops' })).resolves.toMatchObject({ created: false });
    await expect(service.create('g', '2026-01-03T00:00:00Z', { by: 'ops' })).rejects.toMatchObject({ code: 'Conflict' });
    expect(durable.started).toEqual([]);
  });

  test('a bad releaseAt is refused before anything is read or started', async () => {
    const { durable, service } = setup();
    await expect(service.create('g', '2020-01-01T00:00:00Z', { by: 'ops' })).rejects.toMatchObject({ code: 'ValidationFailed' });
    expect(durable.started).toEqual([]);
  });

  test('release of a released gate answers the first release and starts nothing', async () => {
    const { durable, service } = setup();
    const first = { generation: 1, at: '2026-01-01T00:01:00.000Z', by: 'alice', how: 'api' as const };
    durable.gate = record({ state: 'released', release: first });
    await expect(service.release('g', { by: 'bob' })).resolves.toMatchObject({ outcome: 'alreadyReleased', gate: { release: first } });
    expect(durable.started).toEqual([]);
  });

  test('a release racing another follows the running instance instead of failing', async () => {
    const { clock, durable, service, answer } = setup();
    durable.gate = record();
    durable.statuses.set('gate:g:release:1', { runtimeStatus: 'Running', customStatus: null, output: null });
    const pending = drive(clock, service.release('g', { by: 'bob' }));
    await clock.advance(50);
    answer('gate:g:release:1', { outcome: 'released', gate: { name: 'g', generation: 1, state: 'released' } });
    await expect(pending).resolves.toMatchObject({ outcome: 'released' });
    expect(durable.started).toEqual([]);
  });

  test('a release superseded by a reset reads again and releases the new generation', async () => {
    const { clock, durable, service, answer } = setup();
    durable.gate = record();
    durable.onStart = (_o, id) => {
      if (id === 'gate:g:release:1') {
        durable.gate = record({ generation: 2 });
        answer(id, { outcome: 'superseded', gate: { generation: 2 } });
      } else answer(id, { outcome: 'released', gate: { generation: 2, state: 'released' } });
    };
    await expect(drive(clock, service.release('g', { by: 'bob' }))).resolves.toMatchObject({
      outcome: 'released',
      gate: { generation: 2 },
    });
    expect(durable.started.map((s) => s.instanceId)).toEqual(['gate:g:release:1', 'gate:g:release:2']);
  });

  test('an orchestration that does not answer within commandWaitMs leaves the call pending (202)', async () => {
    const { clock, durable, service } = setup();
    durable.gate = record();
    await expect(drive(clock, service.release('g', { by: 'bob' }))).resolves.toEqual({ pending: true, instanceId: 'gate:g:release:1' });
  });

  test('reset starts generation g+1 and cancels the old schedule', async () => {
    const { clock, durable, service, answer } = setup();
    durable.gate = record({ generation: 3, releaseAt: '2026-01-05T00:00:00.000Z' });
    durable.statuses.set('gate:g:gen:3', { runtimeStatus: 'Running', customStatus: null, output: null });
    durable.onStart = (_o, id) => answer(id, { opened: { outcome: 'reset', gate: { name: 'g', generation: 4 }, carried: 2 } });
    await expect(drive(clock, service.reset('g', undefined, { by: 'ops' }))).resolves.toMatchObject({ outcome: 'reset', carried: 2 });
    expect(durable.started[0]).toMatchObject({ instanceId: 'gate:g:gen:4', input: { kind: 'reset', fromGeneration: 3 } });
    expect(durable.events).toEqual([{ instanceId: 'gate:g:gen:3', event: 'GateScheduleCancelled' }]);
  });

  test('a run with a known runId is found, not started twice; unknown gates are 404', async () => {
    const { durable, service } = setup();
    await expect(service.startRun('g', 'w1', { type: 'none' })).rejects.toMatchObject({ code: 'NotFound' });
    durable.gate = record();
    await expect(service.startRun('g', 'w1', { type: 'none' })).resolves.toEqual({
      runId: 'w1',
      created: true,
      instanceId: 'gate:g:run:w1',
    });
    await expect(service.startRun('g', 'w1', { type: 'none' })).resolves.toMatchObject({ created: false });
    expect(durable.started).toHaveLength(1);
    await expect(service.startRun('g', undefined, { type: 'none' })).resolves.toMatchObject({ runId: 'id1', created: true });
    // Once the gate is known to exist, starting runs reads neither its state nor (without a runId) the instance.
    expect(durable.reads).toBe(2);
  });

  test('finding 1 (admin key leaked): a run start and its status carry no Durable management link, though the client offers them', async () => {
    const { durable, service } = setup();
    durable.gate = record();
    const started = await service.startRun('g', 'w1', { type: 'none' });
    expect(JSON.stringify(started)).not.toMatch(/status\/|statusQueryGetUri|Uri/);
    durable.statuses.set('gate:g:run:w1', { runtimeStatus: 'Running', customStatus: { phase: 'waiting', generation: 1 }, output: null });
    await expect(service.runStatus('g', 'w1')).resolves.toEqual({
      runId: 'w1',
      instanceId: 'gate:g:run:w1',
      runtimeStatus: 'Running',
      customStatus: { phase: 'waiting', generation: 1 },
      output: null,
    });
    await expect(service.runStatus('g', 'nope')).rejects.toMatchObject({ code: 'NotFound' });
  });

  test('a run with a job action is checked by the jobs service first; a refused job starts nothing and names the action field', async () => {
    const { durable, service, checked } = setup();
    durable.gate = record();
    const item = (id: string) => ({ id });
    const tooMany: GateAction = { type: 'job', processor: 'billing', items: [item('a'), item('b'), item('c')] };
    await expect(service.startRun('g', 'w1', tooMany)).rejects.toMatchObject({
      code: 'PayloadTooLarge',
      issues: [{ path: 'body.action.items', message: 'at most 2' }],
    });
    expect(durable.started).toEqual([]);
    expect(durable.reads).toBe(0);
    const fits: GateAction = { type: 'job', processor: 'billing', items: [item('a')] };
    await expect(service.startRun('g', 'w1', fits)).resolves.toMatchObject({ created: true });
    expect(checked).toEqual([
      { processor: 'billing', items: [item('a'), item('b'), item('c')] },
      { processor: 'billing', items: [item('a')] },
    ]);
    expect(durable.started).toEqual([
      { orchestration: expect.any(String), instanceId: 'gate:g:run:w1', input: expect.objectContaining({ action: fits }) },
    ]);
  });
});
