/**
 * What survives a restart. A "crash" is an engine whose store stops answering at a chosen
 * checkpoint; a second engine on the same store plays the restart. The last tests use the table
 * store on Azurite (blob log), as `npm start` does.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- jest.mock factories run before imports
jest.mock('@azure/functions-core', () => require('./support/coreModule').coreApi, { virtual: true });

import { randomUUID } from 'node:crypto';

import { BlobServiceClient } from '@azure/storage-blob';

import { VirtualClock } from '../../clock';
import { MemoryStore } from '../../durable/memoryStore';
import { EventType } from '../../durable/protocol';
import { BlobStore } from '../../durable/blobStore';
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
  const gate = new GateStore(store, { orchestration: (c) => c.appended.some((e) => e.includes(`"EventType":${EventType.EventRaised},`)) });
  const first = await startEngine({ store: gate });
  const id = await first.client.start('counterUser', { input: '"k10"' });
  await until(() => gate.held > 0, 'the orchestration checkpoint to be held');
  expect(first.client.readEntity('counter', 'k10').state).toBe(15);
  const second = await startEngine({ store });
  const status = await runUntil(second, id);
  // The signal and the call the orchestration's stored outbox resends are copies of items the
  // entity consumed (their receipts are stored: on Azure Storage they were deleted), so they are
  // dropped; the response the entity's stored outbox still holds is resent and completes the call.
  expect(status.output).toEqual({ value: 15, error: '[object Object]' });
  expect(second.client.readEntity('counter', 'k10').state).toBe(15);
});

describe('blob store on Azurite', () => {
  const connection = process.env.TEST_STORAGE_CONNECTION ?? '';
  const container = (): string => `restart-${randomUUID().replace(/-/g, '').slice(0, 12)}`;

  test('a pending timer, entity state and history survive a restart', async () => {
    const name = container();
    const first = await startEngine({ store: new BlobStore(connection, name) });
    const sleeper = await first.client.start('sleeper', { instanceId: 'sleepy', input: '90' });
    const user = await first.client.start('counterUser', { input: '"persisted"' });
    await runUntil(first, sleeper, ['Running']);
    await runUntil(first, user);
    await first.engine.stop();

    const second = await startEngine({ store: new BlobStore(connection, name), clock: new VirtualClock(epoch + 1000) });
    expect(second.client.status(user)?.output).toEqual({ value: 15, error: '[object Object]' });
    expect(second.client.readEntity('counter', 'persisted').state).toBe(15);
    const status = await runUntil(second, sleeper);
    expect(status.output).toBe('woke');
    expect(second.clock.now()).toBe(epoch + 90_000);
    await second.engine.stop();

    const third = await startEngine({ store: new BlobStore(connection, name) });
    expect(third.client.status(sleeper, { showHistory: true })?.historyEvents?.map((e) => e.EventType)).toEqual([
      'ExecutionStarted',
      'TimerFired',
      'ExecutionCompleted',
    ]);
    await third.engine.stop();
  });

  test('the log rolls over into a snapshot and loads back whole', async () => {
    const name = container();
    const first = await startEngine({ store: new BlobStore(connection, name, { compactBytes: 4000 }) });
    for (let i = 0; i < 6; i++) await runUntil(first, await first.client.start('sequence', { instanceId: `rolled-${i}` }));
    await first.client.signalEntity('counter', 'rolled', 'add', '9');
    await settle(first);
    await first.engine.stop();
    const blobs: string[] = [];
    for await (const blob of BlobServiceClient.fromConnectionString(connection).getContainerClient(name).listBlobsFlat())
      blobs.push(blob.name);
    expect(blobs.some((b) => b.startsWith('snapshot-'))).toBe(true);
    const second = await startEngine({ store: new BlobStore(connection, name, { compactBytes: 4000 }) });
    for (let i = 0; i < 6; i++)
      expect(second.client.status(`rolled-${i}`)?.output).toEqual(['Hello Tokyo', 'Hello Seattle', 'Hello London']);
    expect(second.client.readEntity('counter', 'rolled').state).toBe(9);
    await second.engine.stop();
  });

  test('a torn last record (a crash mid-write) is skipped and the log goes on', async () => {
    const name = container();
    const first = await startEngine({ store: new BlobStore(connection, name) });
    await runUntil(first, await first.client.start('sequence', { instanceId: 'before-tear' }));
    await first.engine.stop();
    const log = BlobServiceClient.fromConnectionString(connection).getContainerClient(name).getAppendBlobClient('log-000001');
    const tail = Buffer.from('{"k":"o","rec":{"instanceId":"torn"');
    await log.appendBlock(tail, tail.length);
    const second = await startEngine({ store: new BlobStore(connection, name) });
    expect(second.client.status('torn')).toBeUndefined();
    await runUntil(second, await second.client.start('sequence', { instanceId: 'after-tear' }));
    await second.engine.stop();
    const third = await startEngine({ store: new BlobStore(connection, name) });
    expect(third.client.status('before-tear')?.runtimeStatus).toBe('Completed');
    expect(third.client.status('after-tear')?.runtimeStatus).toBe('Completed');
    await third.engine.stop();
  });

  test('a second process writing the same task hub is refused', async () => {
    const name = container();
    const a = new BlobStore(connection, name);
    const b = new BlobStore(connection, name);
    await a.load();
    await b.load();
    await a.enqueueEntityMessage('@counter@x', {
      key: '1',
      message: { kind: 'op', id: 'm', operation: 'add', input: '1', signal: true, parent: null },
    });
    await expect(
      b.enqueueEntityMessage('@counter@x', {
        key: '2',
        message: { kind: 'op', id: 'n', operation: 'add', input: '1', signal: true, parent: null },
      }),
    ).rejects.toThrow(/Another process is writing this task hub/);
  });

  test('a continued-as-new instance and a purge persist', async () => {
    const name = container();
    const first = await startEngine({ store: new BlobStore(connection, name) });
    const eternal = await first.client.start('eternal', { input: JSON.stringify({ n: 0, max: 2 }) });
    const done = await first.client.start('sequence', { instanceId: 'to-purge' });
    await runUntil(first, eternal);
    await runUntil(first, done);
    expect(await first.client.purge(done)).toBe(1);
    await first.engine.stop();
    const second = await startEngine({ store: new BlobStore(connection, name) });
    expect(second.client.status(eternal)?.output).toEqual({ n: 2, doubled: 4 });
    expect(second.client.status(done)).toBeUndefined();
    await second.engine.stop();
  });
});
