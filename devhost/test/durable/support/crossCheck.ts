/**
 * Test-only cross-check of task numbering: durable-functions' own TaskOrchestrationExecutor is
 * instrumented (3.5.0 internals: trackOpenTask / recordFireAndForgetAction) to record the id it
 * gives every task, and each episode the engine replays is compared with it. Drift between the
 * devhost's numbering and the library's shows up here as a named mismatch instead of a hang.
 */
import type { EpisodeObservation } from '../../../durable/ports';
import type { OpKind } from '../../../durable/replay';

type JsKind = OpKind | 'retry' | 'http';

interface Task {
  id: number | string | false;
  actionObj: unknown;
  children?: Task[];
}

interface Executor {
  context: { instanceId: string };
  sequenceNumber: number;
  willContinueAsNew: boolean;
  trackOpenTask(task: Task): void;
  recordFireAndForgetAction(action: { actionType: number }, increment?: number): void;
  execute(context: { df: { instanceId: string } }, ...rest: unknown[]): Promise<unknown>;
}

const kindsByAction: Record<number, JsKind> = {
  0: 'activity',
  1: 'activity',
  2: 'subOrchestration',
  3: 'subOrchestration',
  5: 'timer',
  7: 'entityCall',
  8: 'http',
  9: 'entitySignal',
  13: 'lock',
  14: 'release',
};

function kindOf(task: Task): JsKind {
  if (task.actionObj === 'noOp') return 'retry';
  const type = (task.actionObj as { actionType?: number }).actionType;
  return (type === undefined ? undefined : kindsByAction[type]) ?? 'activity';
}

export class IdCrossCheck {
  /** Ids the library assigned in the latest execution of each instance. */
  private readonly js = new Map<string, Map<number, JsKind>>();
  readonly mismatches: string[] = [];

  /** The mismatches so far, clearing them (one test's drift should not fail the next). */
  take(): string[] {
    return this.mismatches.splice(0);
  }
  episodes = 0;
  /** Episodes whose replay failed the orchestration: compared up to where the devhost stopped. */
  failedEpisodes = 0;

  install(): void {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- reaching into the library on purpose
    const mod = require('durable-functions/lib/src/orchestrations/TaskOrchestrationExecutor') as {
      TaskOrchestrationExecutor: { prototype: Executor };
    };
    const proto = mod.TaskOrchestrationExecutor.prototype;
    const record = (executor: Executor, id: number, kind: JsKind): void => {
      this.js.get(executor.context.instanceId)?.set(id, kind);
    };
    const execute = proto.execute;
    const track = proto.trackOpenTask;
    const fireAndForget = proto.recordFireAndForgetAction;
    const js = this.js;
    proto.execute = function (this: Executor, context, ...rest) {
      js.set(context.df.instanceId, new Map());
      return execute.call(this, context, ...rest);
    };
    proto.trackOpenTask = function (this: Executor, task: Task) {
      const fresh = task.children === undefined && task.id === false;
      track.call(this, task);
      if (fresh && typeof task.id === 'number') record(this, task.id, kindOf(task));
    };
    proto.recordFireAndForgetAction = function (this: Executor, action, increment = 1) {
      if (!this.willContinueAsNew) {
        for (let i = 0; i < increment; i++) record(this, this.sequenceNumber + i, action.actionType === 14 ? 'release' : 'entitySignal');
      }
      fireAndForget.call(this, action, increment);
    };
  }

  /** Engine observer: compares the engine's ops for an episode with what the library numbered. */
  readonly episode = (observation: EpisodeObservation): void => {
    this.episodes++;
    const js = this.js.get(observation.instanceId) ?? new Map<number, JsKind>();
    const host = new Map(observation.ops.map((op) => [op.id, op.kind]));
    const where = `${observation.instanceId} (episode with ${observation.events} events)`;
    // A replay that fails the orchestration (unknown function, …) stops where .NET throws, so JS may
    // have numbered more; what the devhost did number must still agree.
    const failed = observation.error !== undefined;
    if (failed) this.failedEpisodes++;
    for (const [id, kind] of js) {
      const hostKind = host.get(id);
      if (hostKind === undefined) {
        if (!failed) this.mismatches.push(`${where}: JS numbered #${id} (${kind}), the devhost did not`);
      } else if (!compatible(kind, hostKind)) this.mismatches.push(`${where}: #${id} is ${kind} in JS but ${hostKind} in the devhost`);
    }
    for (const [id, kind] of host) if (!js.has(id)) this.mismatches.push(`${where}: the devhost numbered #${id} (${kind}), JS did not`);
  };
}

function compatible(js: JsKind, host: OpKind): boolean {
  if (js === 'retry') return host === 'timer' || host === 'activity' || host === 'subOrchestration';
  return js === host;
}
