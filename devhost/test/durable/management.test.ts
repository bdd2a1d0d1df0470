/**
 * Instance management through the engine's client operations: terminate, suspend/resume, purge (one
 * and by filter), raise after completion, duplicate ids, listing with filters and continuation.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- jest.mock factories run before imports
jest.mock('@azure/functions-core', () => require('./support/coreModule').coreApi, { virtual: true });

import { crossCheck, epoch, runUntil, settle, startEngine } from './support/engineHarness';

afterEach(() => {
  expect(crossCheck.take()).toEqual([]);
});

test('terminate ends a running instance with the reason as output; a second terminate is 410', async () => {
  const h = await startEngine();
  const id = await h.client.start('waiter', { instanceId: 'w-term' });
  await runUntil(h, id, ['Running']);
  expect(h.client.status(id)?.customStatus).toEqual({ stage: 'waiting' });
  await h.client.terminate(id, 'enough');
  const status = await runUntil(h, id);
  expect(status).toMatchObject({ runtimeStatus: 'Terminated', output: 'enough' });
  await expect(h.client.terminate(id, 'again')).rejects.toMatchObject({ status: 410 });
  await expect(h.client.raiseEvent(id, 'finish', '1')).rejects.toMatchObject({ status: 410 });
  await expect(h.client.terminate('nobody', 'x')).rejects.toMatchObject({ status: 404 });
});

test('a suspended instance holds events until it is resumed', async () => {
  const h = await startEngine();
  const id = await h.client.start('waiter', { instanceId: 'w-susp' });
  await runUntil(h, id, ['Running']);
  await h.client.suspend(id, 'hold on');
  await runUntil(h, id, ['Suspended']);
  await h.client.raiseEvent(id, 'finish', '"late"');
  await settle(h);
  expect(h.client.status(id)?.runtimeStatus).toBe('Suspended');
  await h.client.resume(id, 'go');
  const status = await runUntil(h, id);
  expect(status).toMatchObject({ runtimeStatus: 'Completed', output: 'late' });
});

test('a duplicate id is refused while the instance runs and replaces it once finished', async () => {
  const h = await startEngine();
  await h.client.start('waiter', { instanceId: 'dup' });
  await expect(h.client.start('waiter', { instanceId: 'dup' })).rejects.toMatchObject({ status: 409 });
  await h.client.raiseEvent('dup', 'finish', '1');
  await runUntil(h, 'dup');
  await h.client.start('sequence', { instanceId: 'dup' });
  expect((await runUntil(h, 'dup')).output).toEqual(['Hello Tokyo', 'Hello Seattle', 'Hello London']);
});

test('bad ids and bad JSON are refused before anything is stored', async () => {
  const h = await startEngine();
  await expect(h.client.start('waiter', { instanceId: '@entity-like' })).rejects.toMatchObject({ status: 400 });
  await expect(h.client.start('waiter', { instanceId: 'a/b' })).rejects.toMatchObject({ status: 400 });
  await expect(h.client.start('waiter', { input: '{not json' })).rejects.toMatchObject({ status: 400 });
  expect(h.engine.orchestrations.size).toBe(0);
  const id = await h.client.start('waiter');
  expect(id).toMatch(/^[0-9a-f]{32}$/);
  await expect(h.client.raiseEvent(id, 'finish', '')).rejects.toMatchObject({ status: 400 });
});

test('purge removes finished instances only, one by one or by filter', async () => {
  const h = await startEngine();
  const done = await h.client.start('sequence', { instanceId: 'purge-done' });
  await runUntil(h, done);
  const running = await h.client.start('waiter', { instanceId: 'purge-running' });
  await runUntil(h, running, ['Running']);
  await expect(h.client.purge(running)).rejects.toMatchObject({ status: 412 });
  expect(await h.client.purge(done)).toBe(1);
  await expect(h.client.purge(done)).rejects.toMatchObject({ status: 404 });
  expect(h.client.status(done)).toBeUndefined();

  for (const n of [1, 2, 3]) await runUntil(h, await h.client.start('sequence', { instanceId: `bulk-${n}` }));
  expect(await h.client.purgeBy({ createdTimeFrom: epoch - 1000, runtimeStatus: ['Completed'] })).toBe(3);
  expect(h.client.status('purge-running')?.runtimeStatus).toBe('Running');
});

test('listing filters by status, time and prefix, and pages with a continuation token', async () => {
  const h = await startEngine();
  for (let i = 0; i < 5; i++) await runUntil(h, await h.client.start('sequence', { instanceId: `list-${i}` }));
  h.clock.advance(60_000);
  await runUntil(h, await h.client.start('waiter', { instanceId: 'other-1' }), ['Running']);

  const completed = h.client.list({ runtimeStatus: ['Completed'] });
  expect(completed.items.map((s) => s.instanceId)).toEqual(['list-0', 'list-1', 'list-2', 'list-3', 'list-4']);
  expect(h.client.list({ instanceIdPrefix: 'other' }).items.map((s) => s.runtimeStatus)).toEqual(['Running']);
  expect(h.client.list({ createdTimeFrom: epoch + 30_000 }).items.map((s) => s.instanceId)).toEqual(['other-1']);

  const first = h.client.list({ top: 4 });
  expect(first.items).toHaveLength(4);
  expect(first.continuation).toBeDefined();
  const second = h.client.list({ top: 4, continuation: first.continuation });
  expect(second.items.map((s) => s.instanceId)).toEqual(['list-4', 'other-1']);
  expect(second.continuation).toBeUndefined();
});

test('status carries the shapes the JS client requires', async () => {
  const h = await startEngine();
  const id = await h.client.start('sequence', { instanceId: 'shape', input: '["Oslo"]' });
  await runUntil(h, id);
  const status = h.client.status(id, { showHistory: true, showHistoryOutput: true });
  expect(status).toMatchObject({
    name: 'sequence',
    instanceId: 'shape',
    runtimeStatus: 'Completed',
    input: ['Oslo'],
    customStatus: null,
    output: ['Hello Oslo'],
    createdTime: '2026-03-01T00:00:00Z',
    lastUpdatedTime: '2026-03-01T00:00:00Z',
  });
  expect(status?.historyEvents?.map((e) => e.EventType)).toEqual(['ExecutionStarted', 'TaskCompleted', 'ExecutionCompleted']);
  expect(status?.historyEvents?.[1]).toMatchObject({ FunctionName: 'hello', Result: 'Hello Oslo' });
  expect(h.client.status(id, { showInput: false })?.input).toBeNull();
  expect(h.client.status(id)).not.toHaveProperty('historyEvents');
});
