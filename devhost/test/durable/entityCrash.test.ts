/**
 * Entity messages when a crash cuts an entity batch off, pinned to what the real stack does (Durable
 * extension + Azure Storage provider; devhost/docs/real-host.md#entity-delivery-after-a-crash). An
 * entity batch there ends in three steps: its outgoing messages are enqueued, its state is committed,
 * its input messages are deleted (Azure/durabletask 5217032961ab
 * src/DurableTask.AzureStorage/AzureStorageOrchestrationService.cs:1219-1230, 1238-1242, 1281-1282).
 * A "crash" is an engine whose store never answers the chosen write (GateStore); a second engine
 * on the same store plays the restart.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- jest.mock factories run before imports
jest.mock('@azure/functions-core', () => require('./support/coreModule').coreApi, { virtual: true });

import { parseHostConfig } from '../../app/hostConfig';
import { MemoryStore } from '../../durable/memoryStore';
import { EventType } from '../../durable/protocol';
import { readDurableSettings } from '../../durable/settings';
import type { EntityCheckpoint } from '../../durable/store';
import { until } from '../../../test/support/waits';
import { crossCheck, history, runUntil, settle, startEngine } from './support/engineHarness';
import { GateStore } from './support/gateStore';

afterEach(() => {
  expect(crossCheck.take()).toEqual([]);
});

const holds = (entityId: string, step: EntityCheckpoint['step']) => (c: EntityCheckpoint) => c.record.id === entityId && c.step === step;

async function held(gate: GateStore): Promise<void> {
  await until('the chosen write to be held', () => (gate.held > 0 ? true : undefined));
}

test("host.json entityMessageReorderWindowInMinutes is read; the default is the extension's 30 (Options/DurableTaskOptions.cs:193)", () => {
  const windowOf = (durableTask: Record<string, unknown>): number =>
    readDurableSettings(parseHostConfig({ extensions: { durableTask } }).durableTask, {}).entityMessageReorderWindowMinutes;
  expect(windowOf({ entityMessageReorderWindowInMinutes: 0 })).toBe(0);
  expect(windowOf({})).toBe(30);
});

describe("a crash after an entity's state write, before its inputs are consumed, runs them again on the new state", () => {
  // The inputs were never deleted, so they come back to the new execution. The extension's
  // MessageSorter would drop an identical redelivery only with a reorder window above 0, and never a
  // client signal (ParentInstanceId null): azure-functions-durable-extension a7c6d6944041
  // src/WebJobs.Extensions.DurableTask/EntityScheduler/MessageSorter.cs:128-132 (pass-through),
  // 234-238 (duplicate drop); window = entityMessageReorderWindowInMinutes (DurableTaskExtension.cs:266-267).
  test.each([0, 30])('a client signal with reorder window %i: add 4 runs twice (8)', async (window) => {
    const store = new MemoryStore();
    const key = `client-${window}`;
    const gate = new GateStore(store, { entity: holds(`@counter@${key}`, 'consumption') });
    const first = await startEngine({ store: gate, reorderWindowMinutes: window });
    await first.client.signalEntity('counter', key, 'add', '4');
    await held(gate);
    expect(first.client.readEntity('counter', key).state).toBe(4);

    const second = await startEngine({ store, reorderWindowMinutes: window });
    await settle(second);
    expect(second.client.readEntity('counter', key).state).toBe(8);
  });

  test.each([
    [0, 8],
    [30, 4],
  ])('a signal from an orchestration with reorder window %i: the entity ends at %i', async (window, expected) => {
    const store = new MemoryStore();
    const key = `orchestration-${window}`;
    const gate = new GateStore(store, { entity: holds(`@counter@${key}`, 'consumption') });
    const first = await startEngine({ store: gate, reorderWindowMinutes: window });
    const id = await first.client.start('signalOnce', { input: JSON.stringify({ key, amount: 4 }) });
    await until('the orchestration to complete', () => (first.client.status(id)?.runtimeStatus === 'Completed' ? true : undefined));
    await held(gate);
    expect(first.client.readEntity('counter', key).state).toBe(4);

    const second = await startEngine({ store, reorderWindowMinutes: window });
    await settle(second);
    expect(second.client.readEntity('counter', key).state).toBe(expected);
  });
});

/**
 * An orchestration calls entity `a`'s `tick` and waits for event `go`; the batch is cut off after
 * its sends and before its state write. The batch runs again from the old state: its signal to `b`
 * is sent again with a new id and runs again (TaskEntityShim.cs:263, 284, 688 — sends, then
 * ContinueAsNew with the state; a new Guid per signal; DurableEntityContext.cs:699), and its response
 * reaches the orchestration a second time.
 */
async function crashAfterSends(key: string, relay: boolean) {
  const store = new MemoryStore();
  const gate = new GateStore(store, { entity: holds(`@counter@${key}`, 'state') });
  const first = await startEngine({ store: gate, reorderWindowMinutes: 0 });
  const input = { key, ...(relay ? { relay: { target: `${key}-b`, amount: 1 } } : {}) };
  const id = await first.client.start('tickThenWait', { input: JSON.stringify(input) });
  await held(gate);
  // The first run's answer is in the orchestration's stored history, and its signal has run.
  const answered = (): boolean => history(first, id).some((e) => e.EventType === EventType.EventRaised);
  await until('the first answer to be in history', () => (answered() ? true : undefined));
  if (relay) await until('the first signal to run', () => (first.client.readEntity('counter', `${key}-b`).state === 1 ? true : undefined));

  const second = await startEngine({ store, reorderWindowMinutes: 0 });
  await settle(second);
  const firstTick = (JSON.parse(String(responses(history(second, id))[0])) as { result: string }).result;
  await second.client.raiseEvent(id, 'go', 'null');
  const status = await runUntil(second, id);
  return { second, id, status, firstTick };
}

function responses(events: ReturnType<typeof history>): (string | null)[] {
  return events.flatMap((e) => (e.EventType === EventType.EventRaised && e.Name !== 'go' ? [e.Input ?? null] : []));
}

test("a crash after an entity's sends, before its state write: its signal arrives twice and the caller keeps the first answer", async () => {
  const { second, status, firstTick } = await crashAfterSends('sends-relay', true);
  expect(second.client.readEntity('counter', 'sends-relay-b').state).toBe(2);
  expect(second.client.readEntity('counter', 'sends-relay').state).toBe(1);
  // The first answer came from the run that was never committed; the orchestration keeps it
  // (azure-functions-durable-js v3.x c212f6c4129c src/orchestrations/TaskOrchestrationExecutor.ts:275-279
  // resolve and remove the task; a second copy finds none and is parked in deferredTasks, :297 — the
  // installed 3.5.0 does the same in setTaskValue). The real SDK runs here, so this is its answer.
  expect(firstTick).toBe('1');
  expect(status.output).toBe(1);
});

test('a duplicate entity response lands in the orchestration history and does not change its output', async () => {
  // Azure Storage accepts a response once history has the EventSent with its request id
  // (DurableTask.AzureStorage/Messaging/OrchestrationSession.cs:179-188), so a second copy is
  // appended as a second EventRaised; the Node SDK parks it unused (TaskOrchestrationExecutor.ts:297).
  const { second, id, status } = await crashAfterSends('sends-dup', false);
  const answers = history(second, id).filter((e) => e.EventType === EventType.EventRaised && e.Name !== 'go');
  expect(answers).toHaveLength(2);
  expect(new Set(answers.map((e) => (e.EventType === EventType.EventRaised ? e.Name : '')))).toHaveProperty('size', 1);
  expect(answers.map((e) => (e.EventType === EventType.EventRaised ? JSON.parse(e.Input ?? 'null') : null))).toEqual([
    { result: '1' },
    { result: '2' },
  ]);
  expect(status.output).toBe(1);
});

test.each([0, 30])(
  'an orchestration cut off after sending a signal and before its checkpoint sends it again, and it runs twice (window %i)',
  async (window) => {
    // The episode runs again with a new request id (its OrchestratorStarted time is new:
    // DurableTask.Core TaskOrchestrationDispatcher.cs:335; extension DurableOrchestrationContext.cs:675,
    // 1221-1233), so not even the sorter takes it for the first: the entity runs both.
    const store = new MemoryStore();
    const key = `episode-${window}`;
    const sent = `"EventType":${EventType.EventSent},`;
    const gate = new GateStore(store, { orchestration: (c) => c.record.instanceId === key && c.appended.some((e) => e.includes(sent)) });
    const first = await startEngine({ store: gate, reorderWindowMinutes: window });
    await first.client.start('signalOnce', { instanceId: key, input: JSON.stringify({ key, amount: 4 }) });
    await held(gate);
    await until('the first signal to run', () => (first.client.readEntity('counter', key).state === 4 ? true : undefined));

    const second = await startEngine({ store, reorderWindowMinutes: window });
    await runUntil(second, key);
    expect(second.client.readEntity('counter', key).state).toBe(8);
  },
);
