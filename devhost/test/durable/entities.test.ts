/**
 * Entities through the real durable-functions code: calls, signals (from orchestrations, clients and
 * other entities), errors, deletion, batching, and critical sections with contending orchestrations.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- jest.mock factories run before imports
jest.mock('@azure/functions-core', () => require('./support/coreModule').coreApi, { virtual: true });

import { crossCheck, runUntil, settle, startEngine } from './support/engineHarness';

afterEach(() => {
  expect(crossCheck.take()).toEqual([]);
});

test('an orchestration signals and calls a counter; an operation error reaches it as the real host sends it', async () => {
  const h = await startEngine();
  const id = await h.client.start('counterUser', { input: '"k1"' });
  const status = await runUntil(h, id);
  // signal (+5) is delivered before the call (+10): messages from one sender stay in order
  // JS turns the entity's error payload ("{}") into Error({}), hence the real host's "[object Object]"
  expect(status.output).toEqual({ value: 15, error: '[object Object]' });
  expect(h.client.readEntity('counter', 'k1')).toEqual({ exists: true, state: 15 });
});

test('client signals are applied in order, a relay signal reaches the other entity, delete removes the state', async () => {
  const h = await startEngine();
  for (let i = 1; i <= 5; i++) await h.client.signalEntity('counter', 'a', 'add', String(i));
  await h.client.signalEntity('Counter', 'a', 'relay', JSON.stringify({ target: 'b', amount: 3 }));
  await settle(h);
  expect(h.client.readEntity('counter', 'a').state).toBe(15);
  expect(h.client.readEntity('counter', 'b').state).toBe(3);
  await h.client.signalEntity('counter', 'a', 'delete', null);
  await settle(h);
  expect(h.client.readEntity('counter', 'a')).toEqual({ exists: false, state: undefined });
  expect(h.client.listEntities('counter', { fetchState: true }).items).toEqual([
    { entityId: { name: 'counter', key: 'b' }, lastOperationTime: expect.stringMatching(/Z$/), state: 3 },
  ]);
});

test('queued operations run as one batch (one entity invocation, one checkpoint)', async () => {
  const h = await startEngine();
  const invoke = jest.spyOn(h.engine.functions, 'invoke');
  // 50 signals accepted while the engine is busy with nothing else: they queue, then run together
  await Promise.all(Array.from({ length: 50 }, () => h.client.signalEntity('counter', 'batched', 'add', '1')));
  await settle(h);
  expect(h.client.readEntity('counter', 'batched').state).toBe(50);
  const entityCalls = invoke.mock.calls.filter(([kind]) => kind === 'entity').length;
  expect(entityCalls).toBeLessThanOrEqual(3);
});

test('a signal to an entity the app does not have is refused', async () => {
  const h = await startEngine();
  await expect(h.client.signalEntity('nosuch', 'x', 'add', '1')).rejects.toMatchObject({
    status: 400,
    message: expect.stringContaining("The function 'nosuch' doesn't exist, is disabled, or is not an entity function."),
  });
});

test('critical sections over two entities serialize concurrent contenders (no lost update)', async () => {
  const h = await startEngine();
  const ids: string[] = [];
  for (let i = 0; i < 12; i++) {
    const [from, to] = i % 2 === 0 ? ['a', 'b'] : ['b', 'a'];
    ids.push(await h.client.start('transfer', { input: JSON.stringify({ from, to, amount: i + 1 }) }));
  }
  for (const id of ids) expect((await runUntil(h, id)).output).toBe(false);
  const a = h.client.readEntity('account', 'a').state as number;
  const b = h.client.readEntity('account', 'b').state as number;
  // evens move a→b (1+3+…+11 = 36), odds b→a (2+4+…+12 = 42)
  expect([a, b]).toEqual([100 - 36 + 42, 100 + 36 - 42]);
  expect(h.engine.entities.get('@account@a')?.record.lockedBy).toBeNull();
  expect(h.engine.entities.get('@account@b')?.record.lockedBy).toBeNull();
});

test('a terminated lock holder frees its locks', async () => {
  const h = await startEngine();
  const holder = await h.client.start('lockAndWait', { instanceId: 'holder', input: JSON.stringify({ from: 'x', to: 'y' }) });
  await settle(h);
  expect(h.engine.entities.get('@account@x')?.record.lockedBy).toBe('holder');
  expect(h.engine.entities.get('@account@y')?.record.lockedBy).toBe('holder');
  const next = await h.client.start('transfer', { input: JSON.stringify({ from: 'x', to: 'y', amount: 5 }) });
  await settle(h);
  expect(h.client.status(next)?.runtimeStatus).toBe('Running');
  await h.client.terminate(holder, 'stop');
  expect((await runUntil(h, holder)).runtimeStatus).toBe('Terminated');
  expect((await runUntil(h, next)).runtimeStatus).toBe('Completed');
  expect(h.engine.entities.get('@account@x')?.record.lockedBy).toBeNull();
  expect(h.client.readEntity('account', 'y').state).toBe(105);
});

// The real extension takes an out-of-process (JS) batch's final `entityState` as is: its rollback of
// failed operations (RollbackEntityOperationsOnExceptions) applies to in-process .NET entities only,
// and durable-functions' Entity.handle keeps a state set before a throw. The devhost does the same.
test('an operation that sets state and then throws keeps that state, as the real extension does for JS entities; the caller gets the error', async () => {
  const h = await startEngine();
  const id = await h.client.start('counterAddThenFail', { input: '"kept"' });
  const status = await runUntil(h, id);
  expect(status.output).toEqual({ value: 15, error: '[object Object]' });
  expect(h.client.readEntity('counter', 'kept')).toEqual({ exists: true, state: 15 });
});
