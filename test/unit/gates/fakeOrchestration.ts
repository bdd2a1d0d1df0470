/**
 * A fake orchestration context for stepping orchestrator generators in unit tests: every Durable call
 * returns a plain description of itself, which the test answers by passing a result to `next()`.
 */
import type { OrchestrationContext } from 'durable-functions';

export type FakeTask =
  | { kind: 'activity'; name: string; input: unknown; retry: boolean }
  | { kind: 'event'; name: string }
  | { kind: 'timer'; fireAt: string; cancel: jest.Mock }
  | { kind: 'all' | 'any'; tasks: FakeTask[] };

export interface FakeContext {
  readonly context: OrchestrationContext;
  readonly statuses: unknown[];
  /** Moves `currentUtcDateTime`, as a new episode would. */
  setTime(iso: string): void;
}

export function fakeContext(input: unknown, instanceId = 'instance-1', now = '2026-01-01T00:00:00.000Z'): FakeContext {
  const statuses: unknown[] = [];
  const df = {
    instanceId,
    currentUtcDateTime: new Date(now),
    getInput: () => input,
    setCustomStatus: (s: unknown) => statuses.push(s),
    callActivity: (name: string, activityInput: unknown): FakeTask => ({ kind: 'activity', name, input: activityInput, retry: false }),
    callActivityWithRetry: (name: string, _retry: unknown, activityInput: unknown): FakeTask => ({
      kind: 'activity',
      name,
      input: activityInput,
      retry: true,
    }),
    waitForExternalEvent: (name: string): FakeTask => ({ kind: 'event', name }),
    createTimer: (fireAt: Date): FakeTask => ({ kind: 'timer', fireAt: fireAt.toISOString(), cancel: jest.fn() }),
    Task: {
      all: (tasks: FakeTask[]): FakeTask => ({ kind: 'all', tasks }),
      any: (tasks: FakeTask[]): FakeTask => ({ kind: 'any', tasks }),
    },
  };
  return {
    context: { df } as unknown as OrchestrationContext,
    statuses,
    setTime: (iso) => {
      df.currentUtcDateTime = new Date(iso);
    },
  };
}

/** The value a step yielded, as a fake task. */
export function yielded(step: IteratorResult<unknown, unknown>): FakeTask {
  if (step.done === true) throw new Error(`The orchestrator finished (returned ${JSON.stringify(step.value)}) instead of yielding`);
  return step.value as FakeTask;
}
