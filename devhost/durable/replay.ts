/**
 * The extension's side of a replay. The real host does not diff action lists: the Durable extension
 * re-executes the actions the JS returned against DTFx's orchestration context (each awaited in
 * order, `OutOfProcOrchestrationShim.ProcessAsyncActionsV2`), and DTFx numbers every scheduled call
 * with `idCounter++` while it walks the history, matching each TaskScheduled/TimerCreated/… by that
 * id. The JS library numbers its tasks the same way (`TaskOrchestrationExecutor.trackOpenTask`),
 * which is why both sides agree. This module reproduces the .NET side: it walks the history, "runs"
 * the actions with .NET semantics (Task.WhenAll waits for every child, WhenAny for the first, the
 * RetryInterceptor's timers including the dummy one after the final attempt) and reports every id it
 * allocated, which of them history already holds, and the new ones the engine must schedule.
 */
import { type Action, ActionType, EventType, type HistoryEvent, type RetryOptions, schedulerId } from './protocol';
import { DevhostError, isDevhostError } from '../errors';

export type OpKind = 'activity' | 'subOrchestration' | 'timer' | 'entityCall' | 'entitySignal' | 'lock' | 'release';

interface OpBase {
  readonly id: number;
  /** True once history holds its scheduling event (TaskScheduled, TimerCreated, …). */
  scheduled: boolean;
  /** Settled: completed, failed, fired or (for signals) sent. */
  done: boolean;
}

export type Op = OpBase &
  (
    | { readonly kind: 'activity'; readonly name: string; readonly input: unknown }
    | {
        readonly kind: 'subOrchestration';
        readonly name: string;
        readonly instanceId: string;
        readonly input: unknown;
        readonly version: string | undefined;
      }
    | { readonly kind: 'timer'; readonly fireAt: number; readonly canceled: boolean }
    | { readonly kind: 'entityCall'; readonly target: string; readonly operation: string; readonly input: unknown; requestId?: string }
    | { readonly kind: 'entitySignal'; readonly target: string; readonly operation: string; readonly input: unknown }
    | {
        readonly kind: 'lock';
        readonly target: string;
        readonly lockSet: readonly string[];
        readonly lockRequestId: string;
        requestId?: string;
      }
    | { readonly kind: 'release'; readonly target: string; readonly lockRequestId: string }
  );

export type FunctionKind = 'activity' | 'orchestrator' | 'entity';

export interface ReplayContext {
  readonly instanceId: string;
  readonly executionId: string;
  readonly parentInstanceId: string | null;
  /** Returns the extension's error text when no function of that kind has that name. */
  readonly checkFunction: (kind: FunctionKind, name: string) => string | undefined;
}

export interface ReplayResult {
  readonly ops: readonly Op[];
  /** Ops the history does not hold yet: the engine appends their events and dispatches them. */
  readonly newOps: readonly Op[];
  /** Set when replay itself fails the orchestration (unknown function, non-determinism, …). */
  readonly error: string | undefined;
  /** Entities still locked by this orchestration after the replay (scheduler ids). */
  readonly heldLocks: readonly string[];
}

/** A .NET Task as far as replay needs it: settles once, runs continuations synchronously in order. */
class SimTask {
  done = false;
  failed = false;
  private continuations: (() => void)[] = [];

  settle(failed: boolean): void {
    if (this.done) return;
    this.done = true;
    this.failed = failed;
    for (const fn of this.continuations.splice(0)) fn();
  }

  then(fn: () => void): void {
    if (this.done) fn();
    else this.continuations.push(fn);
  }

  static settled(failed = false): SimTask {
    const t = new SimTask();
    t.settle(failed);
    return t;
  }
}

/** Durable's RetryOptions defaults (extension `RetryOptions.cs`). */
const defaultMaxRetryIntervalMs = 6 * 24 * 3600 * 1000;

function nonDeterminism(kind: string, event: HistoryEvent): DevhostError {
  return new DevhostError(
    'ReplayFailed',
    `Non-Deterministic workflow detected: A previous execution of this orchestration scheduled ${kind} with sequence ID ${event.EventId}, ` +
      "but the current replay execution hasn't (yet?) scheduled this task. Was a change made to the orchestrator code after this instance had already started running?",
  );
}

const scheduledKinds: Partial<Record<HistoryEvent['EventType'], readonly OpKind[]>> = {
  [EventType.TaskScheduled]: ['activity'],
  [EventType.TimerCreated]: ['timer'],
  [EventType.SubOrchestrationInstanceCreated]: ['subOrchestration'],
  [EventType.EventSent]: ['entityCall', 'entitySignal', 'lock', 'release'],
};

const kindText: Record<OpKind, string> = {
  activity: 'an activity task',
  subOrchestration: 'a sub-orchestration',
  timer: 'a timer',
  entityCall: 'an entity call',
  entitySignal: 'an entity signal',
  lock: 'a lock request',
  release: 'a lock release',
};

class Replayer {
  private nextId = 0;
  private now = 0;
  private readonly ops: Op[] = [];
  private readonly tasks = new Map<number, SimTask>();
  private readonly byRequest = new Map<string, number>();
  private readonly waiters = new Map<string, SimTask[]>();
  private readonly buffered = new Map<string, number>();
  private heldLocks: string[] = [];
  private lockRequestId = '';
  private error: string | undefined;

  constructor(
    private readonly ctx: ReplayContext,
    private readonly actions: readonly Action[],
  ) {}

  run(history: readonly (readonly HistoryEvent[])[]): ReplayResult {
    try {
      for (const segment of history) for (const event of segment) this.process(event);
    } catch (err) {
      if (!isDevhostError(err, 'ReplayFailed')) throw err;
      this.error ??= err.message;
    }
    return {
      ops: this.ops,
      newOps: this.error === undefined ? this.ops.filter((op) => !op.scheduled) : [],
      error: this.error,
      heldLocks: this.heldLocks,
    };
  }

  private process(event: HistoryEvent): void {
    switch (event.EventType) {
      case EventType.OrchestratorStarted:
        this.now = Date.parse(event.Timestamp);
        return;
      case EventType.ExecutionStarted:
        this.runFrom(0);
        return;
      case EventType.TaskScheduled:
      case EventType.TimerCreated:
      case EventType.SubOrchestrationInstanceCreated:
      case EventType.EventSent: {
        const op = this.ops[event.EventId];
        const kinds = scheduledKinds[event.EventType] ?? [];
        if (op === undefined || !kinds.includes(op.kind)) throw nonDeterminism(kindText[kinds[0] ?? 'activity'], event);
        op.scheduled = true;
        if (event.EventType === EventType.EventSent && (op.kind === 'entityCall' || op.kind === 'lock')) {
          const requestId = (JSON.parse(event.Input) as { id: string }).id;
          op.requestId = requestId;
          this.byRequest.set(requestId, op.id);
        }
        return;
      }
      case EventType.TaskCompleted:
      case EventType.SubOrchestrationInstanceCompleted:
        this.settle(event.TaskScheduledId, false);
        return;
      case EventType.TaskFailed:
      case EventType.SubOrchestrationInstanceFailed:
        this.settle(event.TaskScheduledId, true);
        return;
      case EventType.TimerFired:
        this.settle(event.TimerId, false);
        return;
      case EventType.EventRaised: {
        const opId = this.byRequest.get(event.Name);
        if (opId !== undefined) {
          this.byRequest.delete(event.Name);
          this.settle(opId, false);
          return;
        }
        this.raise(event.Name);
        return;
      }
      case EventType.OrchestratorCompleted:
      case EventType.ExecutionCompleted:
      case EventType.ExecutionTerminated:
      case EventType.ExecutionSuspended:
      case EventType.ExecutionResumed:
        return;
    }
  }

  private settle(id: number, failed: boolean): void {
    const task = this.tasks.get(id);
    const op = this.ops[id];
    if (task === undefined || op === undefined || op.done) return;
    op.done = true;
    task.settle(failed);
  }

  /** .NET keeps external events in a case-insensitive FIFO per name (DurableOrchestrationContext). */
  private raise(name: string): void {
    const key = name.toLowerCase();
    const waiting = this.waiters.get(key);
    const first = waiting?.shift();
    if (first !== undefined) {
      first.settle(false);
      return;
    }
    this.buffered.set(key, (this.buffered.get(key) ?? 0) + 1);
  }

  private waitFor(name: string): SimTask {
    const key = name.toLowerCase();
    const count = this.buffered.get(key) ?? 0;
    if (count > 0) {
      this.buffered.set(key, count - 1);
      return SimTask.settled();
    }
    const task = new SimTask();
    const list = this.waiters.get(key) ?? [];
    list.push(task);
    this.waiters.set(key, list);
    return task;
  }

  /** ProcessAsyncActionsV2: each action awaited in turn; a failed one is swallowed and the next runs. */
  private runFrom(index: number): void {
    for (let i = index; i < this.actions.length; i++) {
      const action = this.actions[i] as Action;
      const task = this.invoke(action);
      if (!task.done) {
        task.then(() => this.runFrom(i + 1));
        return;
      }
    }
  }

  private allocate(op: Op): SimTask {
    this.ops.push(op);
    const task = new SimTask();
    this.tasks.set(op.id, task);
    return task;
  }

  private check(kind: 'activity' | 'orchestrator' | 'entity', name: string): void {
    const problem = this.ctx.checkFunction(kind, name);
    if (problem !== undefined) throw new DevhostError('ReplayFailed', problem);
  }

  private invoke(action: Action): SimTask {
    switch (action.actionType) {
      case ActionType.CallActivity:
      case ActionType.CallActivityWithRetry: {
        this.check('activity', action.functionName);
        const attempt = (): SimTask =>
          this.allocate({
            id: this.nextId++,
            kind: 'activity',
            name: action.functionName,
            input: action.input,
            scheduled: false,
            done: false,
          });
        return action.actionType === ActionType.CallActivity ? attempt() : this.withRetry(action.retryOptions, attempt);
      }
      case ActionType.CallSubOrchestrator:
      case ActionType.CallSubOrchestratorWithRetry: {
        this.check('orchestrator', action.functionName);
        this.checkChildId(action.instanceId);
        const start = (): SimTask => {
          const id = this.nextId++;
          const instanceId =
            action.instanceId !== undefined && action.instanceId !== '' ? action.instanceId : `${this.ctx.executionId}:${id}`;
          return this.allocate({
            id,
            kind: 'subOrchestration',
            name: action.functionName,
            instanceId,
            input: action.input,
            version: action.version,
            scheduled: false,
            done: false,
          });
        };
        return action.actionType === ActionType.CallSubOrchestrator ? start() : this.withRetry(action.retryOptions, start);
      }
      case ActionType.CreateTimer: {
        const canceled = action.isCanceled === true;
        const task = this.allocate({
          id: this.nextId++,
          kind: 'timer',
          fireAt: Date.parse(action.fireAt),
          canceled,
          scheduled: false,
          done: false,
        });
        // A cancelled CancellationToken cancels the DTFx timer task at once; its id stays taken.
        if (canceled) task.settle(true);
        return task;
      }
      case ActionType.WaitForExternalEvent:
        return this.waitFor(action.externalEventName);
      case ActionType.CallEntity: {
        this.check('entity', entityName(action.instanceId));
        const target = action.instanceId;
        return this.allocate({
          id: this.nextId++,
          kind: 'entityCall',
          target,
          operation: action.operation,
          input: action.input,
          scheduled: false,
          done: false,
        });
      }
      case ActionType.SignalEntity: {
        this.check('entity', entityName(action.instanceId));
        const target = action.instanceId;
        const task = this.allocate({
          id: this.nextId++,
          kind: 'entitySignal',
          target,
          operation: action.operation,
          input: action.input,
          scheduled: false,
          done: true,
        });
        task.settle(false);
        return task;
      }
      case ActionType.LockEntities: {
        const lockSet = action.lockSet.map((e) => schedulerId(e));
        for (const e of action.lockSet) this.check('entity', e.name);
        this.heldLocks = lockSet;
        this.lockRequestId = action.lockRequestId;
        return this.allocate({
          id: this.nextId++,
          kind: 'lock',
          target: lockSet[0] ?? '',
          lockSet,
          lockRequestId: action.lockRequestId,
          scheduled: false,
          done: false,
        });
      }
      case ActionType.ReleaseEntities: {
        for (const target of this.heldLocks) {
          const task = this.allocate({
            id: this.nextId++,
            kind: 'release',
            target,
            lockRequestId: this.lockRequestId,
            scheduled: false,
            done: true,
          });
          task.settle(false);
        }
        this.heldLocks = [];
        return SimTask.settled();
      }
      case ActionType.ContinueAsNew:
        return SimTask.settled();
      case ActionType.WhenAll:
        return this.whenAll(action.compoundActions.map((a) => this.invoke(a)));
      case ActionType.WhenAny:
        return this.whenAny(action.compoundActions.map((a) => this.invoke(a)));
      case ActionType.CallHttp:
        throw new DevhostError(
          'ReplayFailed',
          'The devhost does not implement callHttp (the built-in BuiltIn::HttpActivity); call an activity that makes the request instead.',
        );
    }
  }

  private checkChildId(instanceId: string | undefined): void {
    if (instanceId === undefined || instanceId === '') return;
    const lower = instanceId.toLowerCase();
    if (
      lower === this.ctx.instanceId.toLowerCase() ||
      (this.ctx.parentInstanceId !== null && lower === this.ctx.parentInstanceId.toLowerCase())
    ) {
      throw new DevhostError(
        'ReplayFailed',
        'The instance ID of a sub-orchestration must be different than the instance ID of a parent orchestration.',
      );
    }
    // The extension passes its arguments to ArgumentException the wrong way round; this is its text.
    if (instanceId.startsWith('@'))
      throw new DevhostError('ReplayFailed', "instanceId (Parameter 'Orchestration instance ids must not start with @')");
  }

  private whenAll(children: readonly SimTask[]): SimTask {
    const all = new SimTask();
    let pending = children.length;
    let failed = false;
    if (pending === 0) all.settle(false);
    for (const child of children) {
      child.then(() => {
        failed ||= child.failed;
        if (--pending === 0) all.settle(failed);
      });
    }
    return all;
  }

  private whenAny(children: readonly SimTask[]): SimTask {
    const any = new SimTask();
    for (const child of children) child.then(() => any.settle(false));
    return any;
  }

  /**
   * DTFx RetryInterceptor: attempt k fails → if it was the last, a "dummy timer for back-compat"
   * firing now, then the failure; otherwise a timer at now + min(first·backoff^k, maxInterval),
   * unless the retry timeout has passed (then the failure at once — JS still waits for a timer).
   */
  private withRetry(options: RetryOptions, attempt: () => SimTask): SimTask {
    const outer = new SimTask();
    const firstAttempt = this.now;
    const maxAttempts = Math.max(1, options.maxNumberOfAttempts);
    const run = (k: number): void => {
      const task = attempt();
      task.then(() => {
        if (!task.failed) return outer.settle(false);
        if (k + 1 >= maxAttempts) return this.timer(this.now).then(() => outer.settle(true));
        const delay = retryDelay(options, k, firstAttempt, this.now);
        if (delay === 0) return outer.settle(true);
        this.timer(this.now + delay).then(() => run(k + 1));
      });
    };
    run(0);
    return outer;
  }

  private timer(fireAt: number): SimTask {
    return this.allocate({ id: this.nextId++, kind: 'timer', fireAt, canceled: false, scheduled: false, done: false });
  }
}

function retryDelay(options: RetryOptions, attempt: number, firstAttempt: number, now: number): number {
  const timeout = options.retryTimeoutInMilliseconds;
  if (timeout !== undefined && now >= firstAttempt + timeout) return 0;
  const backoff = options.backoffCoefficient ?? 1;
  const max = options.maxRetryIntervalInMilliseconds ?? defaultMaxRetryIntervalMs;
  const next = options.firstRetryIntervalInMilliseconds * Math.pow(backoff, attempt);
  return Math.round(next < max ? next : max);
}

function entityName(target: string): string {
  const at = target.indexOf('@', 1);
  return at < 0 ? target : target.slice(1, at);
}

/** `history` in segments (stored history, this episode's new events), walked in order without copying. */
export function replay(ctx: ReplayContext, history: readonly (readonly HistoryEvent[])[], actions: readonly Action[]): ReplayResult {
  return new Replayer(ctx, actions).run(history);
}
