/**
 * The .NET side of replay on hand-written histories: the cases the JS library alone cannot show
 * (non-determinism, Task.WhenAll waiting for every child, a retry whose timeout has passed).
 */
import { type Action, ActionType, EventType, type HistoryEvent } from '../../durable/protocol';
import { replay, type ReplayContext } from '../../durable/replay';

const ctx: ReplayContext = { instanceId: 'i', executionId: 'e', parentInstanceId: null, checkFunction: () => undefined };
const t0 = '2026-01-01T00:00:00.000Z';
const at = (s: number): string => new Date(Date.parse(t0) + s * 1000).toISOString();
const started = (s = 0): HistoryEvent => ({ EventType: EventType.OrchestratorStarted, EventId: -1, Timestamp: at(s) });
const start: HistoryEvent = {
  EventType: EventType.ExecutionStarted,
  EventId: -1,
  Timestamp: t0,
  Name: 'o',
  Version: null,
  Input: null,
  OrchestrationInstance: { InstanceId: 'i', ExecutionId: 'e' },
  ParentInstance: null,
};
const scheduled = (id: number, s = 0): HistoryEvent => ({
  EventType: EventType.TaskScheduled,
  EventId: id,
  Timestamp: at(s),
  Name: 'a',
  Input: '[null]',
});
const activity = (input: number): Action => ({ actionType: ActionType.CallActivity, functionName: 'a', input });

test('a history event the actions do not produce is non-determinism', () => {
  const result = replay(ctx, [[started(), start, scheduled(0)]], [{ actionType: ActionType.CreateTimer, fireAt: at(60) }]);
  expect(result.error).toMatch(
    /^Non-Deterministic workflow detected: A previous execution of this orchestration scheduled an activity task with sequence ID 0/,
  );
  expect(result.newOps).toEqual([]);
});

test('Task.all waits for every child, even after one failed (.NET Task.WhenAll)', () => {
  const actions: Action[] = [{ actionType: ActionType.WhenAll, compoundActions: [activity(0), activity(1)] }, activity(2)];
  const failed: HistoryEvent = {
    EventType: EventType.TaskFailed,
    EventId: -1,
    Timestamp: at(1),
    TaskScheduledId: 0,
    Reason: 'r',
    Details: 'd',
  };
  const early = replay(ctx, [[started(), start, scheduled(0), scheduled(1), started(1), failed]], actions);
  expect(early.ops.map((op) => op.id)).toEqual([0, 1]);
  const completed: HistoryEvent = { EventType: EventType.TaskCompleted, EventId: -1, Timestamp: at(2), TaskScheduledId: 1, Result: '1' };
  const later = replay(ctx, [[started(), start, scheduled(0), scheduled(1), started(1), failed, started(2), completed]], actions);
  expect(later.newOps.map((op) => op.id)).toEqual([2]);
});

test('a retry whose timeout has passed fails without another timer; the last attempt gets an immediate one', () => {
  const retry = (timeout: number | undefined): Action => ({
    actionType: ActionType.CallActivityWithRetry,
    functionName: 'a',
    retryOptions: {
      firstRetryIntervalInMilliseconds: 1000,
      maxNumberOfAttempts: 3,
      ...(timeout === undefined ? {} : { retryTimeoutInMilliseconds: timeout }),
    },
  });
  const failedAt = (s: number): HistoryEvent => ({
    EventType: EventType.TaskFailed,
    EventId: -1,
    Timestamp: at(s),
    TaskScheduledId: 0,
    Reason: 'r',
    Details: 'd',
  });
  const expired = replay(ctx, [[started(), start, scheduled(0), started(5), failedAt(5)]], [retry(2000)]);
  expect(expired.newOps).toEqual([]);
  const inTime = replay(ctx, [[started(), start, scheduled(0), started(1), failedAt(1)]], [retry(2000)]);
  expect(inTime.newOps).toMatchObject([{ id: 1, kind: 'timer', fireAt: Date.parse(at(2)) }]);
  const single = replay(
    ctx,
    [[started(), start, scheduled(0), started(3), failedAt(3)]],
    [{ ...retry(undefined), retryOptions: { firstRetryIntervalInMilliseconds: 1000, maxNumberOfAttempts: 1 } } as Action],
  );
  expect(single.newOps).toMatchObject([{ id: 1, kind: 'timer', fireAt: Date.parse(at(3)) }]);
});

test('an external event buffered before it is awaited matches its waiter case-insensitively', () => {
  const raised = (name: string, s: number): HistoryEvent => ({
    EventType: EventType.EventRaised,
    EventId: -1,
    Timestamp: at(s),
    Name: name,
    Input: '1',
  });
  const actions: Action[] = [{ actionType: ActionType.WaitForExternalEvent, externalEventName: 'Go' }, activity(0)];
  const result = replay(ctx, [[started(), start, raised('go', 0)]], actions);
  expect(result.newOps.map((op) => op.kind)).toEqual(['activity']);
});
