/**
 * What survives a restart. A "crash" is an engine whose store stops answering at a chosen
 * checkpoint; a second engine on the same store plays the restart. The last tests use the table
 * store on Azurite, as `npm start` does.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- jest.mock factories run before imports
jest.mock('@azure/functions-core', () => require('./support/coreModule').coreApi, { virtual: true });

import { randomUUID } from 'node:crypto';

import { VirtualClock } from '../../clock';
import { MemoryStore } from '../../durable/memoryStore';
import { EventType } from '../../durable/protocol';
import { TableStore } from '../../durable/tableStore';
import { crossCheck, epoch, runUntil, settle, startEngine } from './support/engineHarness';
import { GateStore } from './support/gateStore';

afterEach(() => {
  expect(crossCheck.take()).toEqual([]);
});

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  throw new Error(`Timed out waiting for ${what}`);
}

test('a pending timer fires after a restart', async () => {
  const store = new MemoryStore();
  const first = await startEngine({ store });
  const id = await first.client.start('sleeper', { input: '30' });
  await runUntil(first, id, ['Running']);
  // the first engine is abandoned here, as a killed process would be
  const second = await startEngine({ store, clock: new VirtualClock(epoch) });
  const status = await runUntil(second, id);
  expect(status.output).toBe('woke');
  expect(second.clock.now()).toBe(epoch + 30_000);
});

test('accepted client messages survive a restart before they are processed', async () => {
  const store = new MemoryStore();
  await store.enqueueEntityMessage('@counter@queued', {
    key: '00000000000000001',
    message: { kind: 'op', id: 'm1', operation: 'add', input: '4', signal: true, parent: null },
  });
  const h = await startEngine({ store });
  await settle(h);
  expect(h.client.readEntity('counter', 'queued').state).toBe(4);
});

test("a crash after an orchestration's checkpoint and before the entity's loses no message", async () => {
  const store = new MemoryStore();
  const gate = new GateStore(store, { entity: (c) => c.record.id === '@counter@k9' });
  const first = await startEngine({ store: gate });
  const id = await first.client.start('counterUser', { input: '"k9"' });
  await until(() => gate.held > 0, 'the entity checkpoint to be held');
  const second = await startEngine({ store });
  const status = await runUntil(second, id);
  expect(status.output).toEqual({ value: 15, error: '[object Object]' });
  expect(second.client.readEntity('counter', 'k9').state).toBe(15);
});

test("a crash after the entity's checkpoint and before the orchestration's doubles no operation", async () => {
  const store = new MemoryStore();
  const gate = new GateStore(store, { orchestration: (c) => c.record.history.some((e) => e.EventType === EventType.EventRaised) });
  const first = await startEngine({ store: gate });
  const id = await first.client.start('counterUser', { input: '"k10"' });
  await until(() => gate.held > 0, 'the orchestration checkpoint to be held');
  expect(first.client.readEntity('counter', 'k10').state).toBe(15);
  const second = await startEngine({ store });
  const status = await runUntil(second, id);
  // the resent signal and call are recognised; the stored response is resent instead
  expect(status.output).toEqual({ value: 15, error: '[object Object]' });
  expect(second.client.readEntity('counter', 'k10').state).toBe(15);
});

describe('table store on Azurite', () => {
  const connection = process.env.TEST_STORAGE_CONNECTION ?? '';
  const table = (): string => `Restart${randomUUID().replace(/-/g, '').slice(0, 12)}DevhostState`;

  test('a pending timer, entity state and history survive a restart', async () => {
    const name = table();
    const first = await startEngine({ store: new TableStore(connection, name) });
    const sleeper = await first.client.start('sleeper', { instanceId: 'sleepy', input: '90' });
    const user = await first.client.start('counterUser', { input: '"persisted"' });
    await runUntil(first, sleeper, ['Running']);
    await runUntil(first, user);
    await first.engine.stop();

    const second = await startEngine({ store: new TableStore(connection, name), clock: new VirtualClock(epoch + 1000) });
    expect(second.client.status(user)?.output).toEqual({ value: 15, error: '[object Object]' });
    expect(second.client.readEntity('counter', 'persisted').state).toBe(15);
    const status = await runUntil(second, sleeper);
    expect(status.output).toBe('woke');
    expect(second.clock.now()).toBe(epoch + 90_000);
    await second.engine.stop();

    const third = await startEngine({ store: new TableStore(connection, name) });
    expect(third.client.status(sleeper, { showHistory: true })?.historyEvents?.map((e) => e.EventType)).toEqual([
      'ExecutionStarted',
      'TimerFired',
      'ExecutionCompleted',
    ]);
    await third.engine.stop();
  });

  test('a continued-as-new instance and a purge persist', async () => {
    const name = table();
    const first = await startEngine({ store: new TableStore(connection, name) });
    const eternal = await first.client.start('eternal', { input: JSON.stringify({ n: 0, max: 2 }) });
    const done = await first.client.start('sequence', { instanceId: 'to-purge' });
    await runUntil(first, eternal);
    await runUntil(first, done);
    expect(await first.client.purge(done)).toBe(1);
    await first.engine.stop();
    const second = await startEngine({ store: new TableStore(connection, name) });
    expect(second.client.status(eternal)?.output).toEqual({ n: 2, doubled: 4 });
    expect(second.client.status(done)).toBeUndefined();
    await second.engine.stop();
  });
});
