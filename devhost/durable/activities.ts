/**
 * Activity execution: at most `limits.activities` at once, inputs and outputs encoded as the
 * extension does (a string input arrives as-is and the library's `tryJsonParse` undoes the JS side's
 * extra encoding; the return value becomes `TaskCompleted.Result` JSON text). Results are not
 * checkpointed on their own: the episode that consumes them does, and an activity whose result was
 * not checkpointed yet runs again after a restart (at least once, as on the real host).
 */
import type { RpcTypedData } from '../core/types';
import type { Execution, Instances, Mail } from './ports';
import { activityFailure } from './failures';
import { EventType, type HistoryEvent, iso } from './protocol';
import { type ExecutionRef, isTerminal } from './records';

/** What running an activity needs of the engine. */
export type ActivityHost = Pick<Instances, 'orchestrations' | 'now'> &
  Pick<Mail, 'deliverToOrchestration'> &
  Pick<Execution, 'functions' | 'activities' | 'stopped'>;

function inputData(input: unknown): RpcTypedData | undefined {
  if (input === undefined || input === null) return undefined;
  return { string: typeof input === 'string' ? input : JSON.stringify(input) };
}

/** `TaskCompleted.Result`: JSON text of what the function returned (null when it returned nothing). */
function resultText(rv: RpcTypedData | null | undefined): string | null {
  if (rv === null || rv === undefined) return null;
  if (typeof rv.json === 'string') return rv.json;
  if (typeof rv.string === 'string') return JSON.stringify(rv.string);
  if (typeof rv.int === 'number') return String(rv.int);
  if (typeof rv.double === 'number') return JSON.stringify(rv.double);
  if (rv.bytes !== null && rv.bytes !== undefined) return JSON.stringify(Buffer.from(rv.bytes).toString('base64'));
  return null;
}

export function startActivity(engine: ActivityHost, target: ExecutionRef, taskId: number, name: string, input: unknown): void {
  const rt = engine.orchestrations.get(target.instanceId);
  const current = (): boolean =>
    rt !== undefined &&
    rt.record.executionId === target.executionId &&
    !isTerminal(rt.record.status) &&
    !engine.stopped &&
    engine.orchestrations.get(target.instanceId) === rt;
  if (rt !== undefined) rt.activeActivities++;
  let counted = rt !== undefined;
  const done = (): void => {
    if (counted && rt !== undefined) rt.activeActivities--;
    counted = false;
  };
  void engine.activities
    .run(async () => {
      if (!current()) return;
      const missing = engine.functions.check('activity', name);
      const outcome = missing === undefined ? await engine.functions.invoke('activity', name, inputData(input)) : undefined;
      if (engine.stopped) return;
      const ts = iso(engine.now());
      const event: HistoryEvent =
        outcome?.ok === true
          ? {
              EventType: EventType.TaskCompleted,
              EventId: -1,
              Timestamp: ts,
              TaskScheduledId: taskId,
              Result: resultText(outcome.response.returnValue),
            }
          : {
              EventType: EventType.TaskFailed,
              EventId: -1,
              Timestamp: ts,
              TaskScheduledId: taskId,
              ...activityFailure(name, outcome === undefined ? new Error(missing) : outcome.error),
            };
      // Count it done first: delivering may start the episode that is waiting for the last result.
      done();
      engine.deliverToOrchestration(target, { event, dedupKey: `t${taskId}`, executionId: target.executionId });
    })
    .finally(done);
}
