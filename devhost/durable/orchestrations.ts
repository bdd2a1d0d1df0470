/**
 * Orchestration episodes. An episode takes the inbox, appends `OrchestratorStarted` + the new
 * events to history, invokes the orchestrator once with the whole history (as the extension does),
 * replays the returned actions to number the new work, sends its entity messages, checkpoints the
 * new history in one write, and only then starts its activities, timers and sub-orchestrations.
 * Entity messages go first as Azure Storage enqueues them before it commits
 * (DurableTask.AzureStorage AzureStorageOrchestrationService.cs:1219-1242): an episode cut off
 * after them runs again and sends them again, with new request ids, which the entity runs too.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';

import type { InvocationOutcome } from '../core/invoker';
import { orchestratorFailure } from './failures';
import { dropInbox, type LifetimeHost, newExecutionId, onTerminal, startChild, startEvent } from './instances';
import type { EngineObserver, Execution, Persistence } from './ports';
import { type Action, ActionType, EventType, type FailureDetails, type HistoryEvent, iso, type OrchestratorState } from './protocol';
import { withReceipts } from './receipts';
import { type EntityMessage, isTerminal, type OrchestrationRecord, type OutboxItem, type RuntimeStatus } from './records';
import { type Op, replay, type ReplayResult } from './replay';
import { type InboxItem, type OrchestrationRuntime, playedJson } from './runtime';

/** JS splits timers longer than this itself; advertising ~100 years means it never does (see README). */
const maximumShortTimerDuration = '36500.00:00:00';
const outOfProcMarker = '$OutOfProcData$:';

/** What an episode needs of the engine. */
export type EpisodeHost = LifetimeHost &
  Pick<Persistence, 'checkpoint'> &
  Pick<Execution, 'functions' | 'orchestratorSlots'> & {
    readonly observer: EngineObserver | undefined;
    /** Runs the instance's next episode after `ms` (real time) unless something marks it earlier. */
    deferEpisode(rt: OrchestrationRuntime, ms: number): void;
    endDeferral(rt: OrchestrationRuntime): void;
  };

export async function runOrchestrationWork(engine: EpisodeHost, rt: OrchestrationRuntime): Promise<void> {
  // A message can arrive while the instance's creation is still being written; the start goes first.
  if (rt.record.pendingStart !== null && rt.inbox[0]?.event.EventType !== EventType.ExecutionStarted) return;
  if (isTerminal(rt.record.status)) dropInbox(rt);
  const delay = episodeDelay(rt);
  if (delay > 0) {
    engine.deferEpisode(rt, delay);
    return;
  }
  engine.endDeferral(rt);
  const batch = isTerminal(rt.record.status) ? [] : takeBatch(rt);
  if (batch.length === 0) {
    if (rt.dirty) await saveSummary(engine, rt);
    return;
  }
  let plan: EpisodePlan;
  let appendedJson: string[];
  try {
    const started = performance.now();
    plan = await planEpisode(engine, rt, batch);
    rt.lastEpisodeMs = performance.now() - started;
    appendedJson = plan.continuedAsNew ? [] : plan.appended.map((e) => JSON.stringify(e));
    const origins = batch.flatMap((i) => (i.origin === undefined ? [] : [i.origin]));
    const received = withReceipts(plan.record.received, origins, (sender, item) => engine.mayResend(sender, item));
    plan = { ...plan, record: { ...plan.record, received } };
    rt.outbox.push(...plan.sends);
    for (const item of plan.sends) engine.send(rt, item);
    const snap = rt.snapshotOutbox();
    const stored = { ...plan.record, outbox: snap.items };
    const consumed = batch.flatMap((i) => (i.pendingKey === undefined ? [] : [i.pendingKey]));
    const checkpoint = { record: stored, appended: appendedJson, newExecution: plan.continuedAsNew, consumed };
    await engine.checkpoint(`orchestration ${rt.id}`, () => engine.store.saveOrchestration(checkpoint));
    rt.markStored(stored.outbox, snap.changes);
  } catch (err) {
    rt.inbox.unshift(...batch);
    throw err;
  }
  apply(engine, rt, batch, plan, appendedJson);
}

/**
 * Activity results may gather a little while more of the instance's activities are still running:
 * a fan-out then replays its (long) history a few times instead of once per result. The wait is
 * twice the last episode's duration (5–250 ms) from the first result, never applies to anything but
 * activity results, and ends as soon as the last running activity reports.
 */
function episodeDelay(rt: OrchestrationRuntime): number {
  if (rt.activeActivities === 0 || rt.inbox.length === 0) return 0;
  if (!rt.inbox.every((i) => i.event.EventType === EventType.TaskCompleted || i.event.EventType === EventType.TaskFailed)) return 0;
  const window = Math.min(250, Math.max(5, 2 * rt.lastEpisodeMs));
  const first = Math.min(...rt.inbox.map((i) => i.arrivedAt ?? 0));
  return Math.max(0, first + window - performance.now());
}

interface EpisodePlan {
  /**
   * The record after the episode. Once it is stored, its outbox is replaced by the live one and
   * `appended` is pushed onto its history (the live array, shared, not copied).
   */
  readonly record: OrchestrationRecord;
  readonly appended: readonly HistoryEvent[];
  readonly newOps: readonly Op[];
  readonly sends: readonly OutboxItem[];
  readonly continuedAsNew: boolean;
  readonly replay: ReplayResult | undefined;
}

/** Inbox items this episode processes: a terminate ends it; while suspended, only resume/terminate count. */
function takeBatch(rt: OrchestrationRuntime): InboxItem[] {
  const take: InboxItem[] = [];
  const keep: InboxItem[] = [];
  let suspended = rt.record.status === 'Suspended';
  let i = 0;
  for (; i < rt.inbox.length; i++) {
    const item = rt.inbox[i] as InboxItem;
    const type = item.event.EventType;
    if (type === EventType.ExecutionTerminated) {
      take.push(item);
      i++;
      break;
    }
    if (type === EventType.ExecutionSuspended) suspended = true;
    if (type === EventType.ExecutionResumed && suspended) {
      suspended = false;
      take.push(item, ...keep.splice(0));
      continue;
    }
    if (suspended && !isControl(item.event)) keep.push(item);
    else take.push(item);
  }
  rt.inbox = [...keep, ...rt.inbox.slice(i)];
  return take;
}

function isControl(event: HistoryEvent): boolean {
  return (
    event.EventType === EventType.ExecutionSuspended ||
    event.EventType === EventType.ExecutionResumed ||
    event.EventType === EventType.ExecutionTerminated
  );
}

async function planEpisode(engine: EpisodeHost, rt: OrchestrationRuntime, batch: readonly InboxItem[]): Promise<EpisodePlan> {
  const rec = rt.record;
  const now = engine.now();
  const started: HistoryEvent = { EventType: EventType.OrchestratorStarted, EventId: -1, Timestamp: iso(now) };
  const events = batch.map((i) => i.event);
  const terminate = events.find((e) => e.EventType === EventType.ExecutionTerminated);
  if (terminate !== undefined && terminate.EventType === EventType.ExecutionTerminated) {
    const appended: HistoryEvent[] = [
      started,
      terminate,
      { EventType: EventType.OrchestratorCompleted, EventId: -1, Timestamp: iso(now) },
      {
        EventType: EventType.ExecutionCompleted,
        EventId: -1,
        Timestamp: iso(now),
        OrchestrationStatus: 'Terminated',
        Result: terminate.Input,
      },
    ];
    return finished(rec, now, appended, { status: 'Terminated', output: terminate.Input }, undefined);
  }
  let suspended = rec.status === 'Suspended';
  for (const e of events) {
    if (e.EventType === EventType.ExecutionSuspended) suspended = true;
    if (e.EventType === EventType.ExecutionResumed) suspended = false;
  }
  if (events.every(isControl)) {
    const appended = [started, ...events, { EventType: EventType.OrchestratorCompleted, EventId: -1, Timestamp: iso(now) } as const];
    const status: RuntimeStatus = suspended ? 'Suspended' : rec.history.length === 0 ? 'Pending' : 'Running';
    return finished(rec, now, appended, { status, output: rec.output }, undefined);
  }
  return execute(engine, rt, started, events, suspended);
}

function finished(
  rec: OrchestrationRecord,
  now: number,
  appended: readonly HistoryEvent[],
  outcome: { status: RuntimeStatus; output: string | null },
  replayed: ReplayResult | undefined,
): EpisodePlan {
  return {
    record: {
      ...rec,
      status: outcome.status,
      output: outcome.output,
      lastUpdatedTime: now,
      pendingStart: null,
    },
    appended,
    newOps: [],
    sends: [],
    continuedAsNew: false,
    replay: replayed,
  };
}

interface JsOutcome {
  readonly state: OrchestratorState | undefined;
  /** The orchestrator threw: with state, an orchestration failure; without, an invocation failure. */
  readonly threw: string | undefined;
}

function readOutcome(outcome: InvocationOutcome): JsOutcome {
  if (outcome.ok) {
    const rv = outcome.response.returnValue;
    const text = rv?.json ?? rv?.string;
    if (typeof text === 'string') {
      try {
        return { state: JSON.parse(text) as OrchestratorState, threw: undefined };
      } catch {
        // fall through
      }
    }
    return { state: undefined, threw: 'Out of proc orchestrators must return a valid JSON schema.' };
  }
  const message = outcome.error.message;
  const at = message.indexOf(outOfProcMarker);
  if (at < 0) return { state: undefined, threw: message };
  try {
    const state = JSON.parse(message.slice(at + outOfProcMarker.length)) as OrchestratorState;
    return { state, threw: state.error ?? '' };
  } catch {
    return { state: undefined, threw: message.slice(0, at) };
  }
}

function payloadJson(rt: OrchestrationRuntime, fresh: readonly HistoryEvent[], input: string | null): string {
  const rec = rt.record;
  const history = rt.played.concat(fresh.map((e) => playedJson(JSON.stringify(e), false))).join(',');
  const parent = rec.parent === null ? 'null' : JSON.stringify(rec.parent.instanceId);
  return (
    `{"history":[${history}],"input":${input ?? 'null'},"instanceId":${JSON.stringify(rec.instanceId)},` +
    `"isReplaying":${rt.played.length > 0},"parentInstanceId":${parent},"upperSchemaVersion":1,"upperSchemaVersionNew":3,` +
    `"longRunningTimerIntervalDuration":"3.00:00:00","maximumShortTimerDuration":"${maximumShortTimerDuration}",` +
    `"defaultHttpAsyncRequestSleepTimeMillseconds":30000}`
  );
}

async function execute(
  engine: EpisodeHost,
  rt: OrchestrationRuntime,
  started: HistoryEvent,
  events: readonly HistoryEvent[],
  suspended: boolean,
): Promise<EpisodePlan> {
  const rec = rt.record;
  const now = Date.parse(started.Timestamp);
  const fresh = [started, ...events];
  const history = [rec.history, fresh];
  const missing = engine.functions.check('orchestrator', rec.name);
  let js: JsOutcome;
  if (missing !== undefined) js = { state: undefined, threw: missing };
  else {
    const payload = { string: payloadJson(rt, fresh, rec.input) };
    js = readOutcome(await engine.orchestratorSlots.run(() => engine.functions.invoke('orchestrator', rec.name, payload)));
  }
  const actions: readonly Action[] = js.state?.actions[0] ?? [];
  const replayed =
    js.state === undefined
      ? undefined
      : replay(
          {
            instanceId: rec.instanceId,
            executionId: rec.executionId,
            parentInstanceId: rec.parent?.instanceId ?? null,
            checkFunction: (kind, name) => engine.functions.check(kind, name),
          },
          history,
          actions,
        );
  if (replayed !== undefined)
    engine.observer?.episode?.({
      instanceId: rec.instanceId,
      executionId: rec.executionId,
      events: rec.history.length + fresh.length,
      ops: replayed.ops,
      error: replayed.error,
    });

  let failure: { reason: string; details?: FailureDetails | undefined } | undefined;
  if (js.state === undefined) failure = { reason: orchestratorFailure(rec.name, js.threw ?? '') };
  else if (replayed?.error !== undefined) failure = { reason: replayed.error };
  else if (js.threw !== undefined) failure = { reason: orchestratorFailure(rec.name, js.threw), details: js.state.failureDetails };

  const newOps = replayed?.newOps ?? [];
  const { scheduled, sends } = scheduleEvents(rec, newOps, now);
  const appended: HistoryEvent[] = [
    ...fresh,
    ...scheduled,
    { EventType: EventType.OrchestratorCompleted, EventId: -1, Timestamp: iso(now) },
  ];
  const customStatus = js.state?.customStatus === undefined ? null : JSON.stringify(js.state.customStatus);
  const base = { ...rec, customStatus, lastUpdatedTime: now, pendingStart: null };
  const common = { newOps, sends, replay: replayed };

  if (failure !== undefined) {
    appended.push({
      EventType: EventType.ExecutionCompleted,
      EventId: -1,
      Timestamp: iso(now),
      OrchestrationStatus: 'Failed',
      Result: failure.reason,
      ...(failure.details === undefined ? {} : { FailureDetails: failure.details }),
    });
    const record = {
      ...base,
      status: 'Failed' as const,
      output: failure.reason,
      failureDetails: failure.details ?? null,
    };
    return { ...common, record, appended, continuedAsNew: false };
  }
  const state = js.state as OrchestratorState;
  const continueAsNew = state.isDone ? actions.find((a) => a.actionType === ActionType.ContinueAsNew) : undefined;
  if (continueAsNew !== undefined && continueAsNew.actionType === ActionType.ContinueAsNew) {
    return { ...common, record: nextExecution(base, continueAsNew.input, now), appended, continuedAsNew: true };
  }
  if (state.isDone) {
    const output = state.output === undefined ? null : JSON.stringify(state.output);
    appended.push({
      EventType: EventType.ExecutionCompleted,
      EventId: -1,
      Timestamp: iso(now),
      OrchestrationStatus: 'Completed',
      Result: output,
    });
    const record = { ...base, status: 'Completed' as const, output };
    return { ...common, record, appended, continuedAsNew: false };
  }
  const record = { ...base, status: suspended ? ('Suspended' as const) : ('Running' as const) };
  return { ...common, record, appended, continuedAsNew: false };
}

/**
 * continueAsNew: a fresh execution whose input is what JS passed (after its `processInput`, so a
 * string arrives double-encoded, as we read the real extension to do), history reset.
 */
function nextExecution(base: OrchestrationRecord, input: unknown, now: number): OrchestrationRecord {
  const executionId = newExecutionId();
  const text = JSON.stringify(input === undefined ? null : input);
  const start = startEvent(base.instanceId, executionId, { ...base, input: text }, now);
  return { ...base, executionId, status: 'Running', input: text, output: null, failureDetails: null, pendingStart: start, history: [] };
}

function requestJson(message: EntityMessage, executionId: string): string {
  switch (message.kind) {
    case 'op':
      return JSON.stringify({
        op: message.operation,
        ...(message.signal ? { signal: true } : {}),
        ...(message.input === null ? {} : { input: message.input }),
        id: message.id,
        parent: message.parent,
        parentExecution: executionId,
      });
    case 'lock':
      return JSON.stringify({
        id: message.id,
        parent: message.parent,
        parentExecution: executionId,
        lockset: message.lockSet.map((id) => ({ name: id.slice(1, id.indexOf('@', 1)), key: id.slice(id.indexOf('@', 1) + 1) })),
        pos: message.position,
      });
    case 'release':
      return JSON.stringify({ parent: message.parent, id: message.id });
  }
}

/** History events for the new ops, in id order, and the entity messages they send. */
function scheduleEvents(rec: OrchestrationRecord, ops: readonly Op[], now: number): { scheduled: HistoryEvent[]; sends: OutboxItem[] } {
  const scheduled: HistoryEvent[] = [];
  const sends: OutboxItem[] = [];
  const ts = iso(now);
  const exec = { instanceId: rec.instanceId, executionId: rec.executionId };
  const toEntity = (op: Op, target: string, message: EntityMessage, name: 'op' | 'release'): void => {
    scheduled.push({
      EventType: EventType.EventSent,
      EventId: op.id,
      Timestamp: ts,
      InstanceId: target,
      Name: name,
      Input: requestJson(message, rec.executionId),
    });
    sends.push({ id: randomUUID(), to: 'entity', target, message });
  };
  for (const op of ops) {
    switch (op.kind) {
      case 'activity':
        scheduled.push({
          EventType: EventType.TaskScheduled,
          EventId: op.id,
          Timestamp: ts,
          Name: op.name,
          Input: JSON.stringify([op.input ?? null]),
        });
        break;
      case 'timer':
        scheduled.push({ EventType: EventType.TimerCreated, EventId: op.id, Timestamp: ts, FireAt: iso(op.fireAt) });
        break;
      case 'subOrchestration':
        scheduled.push({
          EventType: EventType.SubOrchestrationInstanceCreated,
          EventId: op.id,
          Timestamp: ts,
          Name: op.name,
          InstanceId: op.instanceId,
          Input: JSON.stringify(op.input ?? null),
        });
        break;
      case 'entityCall':
      case 'entitySignal': {
        const id = randomUUID();
        if (op.kind === 'entityCall') op.requestId = id;
        const input = op.input === undefined ? null : JSON.stringify(op.input);
        const call = op.kind === 'entityCall';
        toEntity(
          op,
          op.target,
          { kind: 'op', id, operation: op.operation, input, signal: !call, parent: rec.instanceId, ...(call ? { replyTo: exec } : {}) },
          'op',
        );
        break;
      }
      case 'lock':
        op.requestId = op.lockRequestId;
        toEntity(
          op,
          op.target,
          { kind: 'lock', id: op.lockRequestId, parent: rec.instanceId, owner: exec, lockSet: op.lockSet, position: 0 },
          'op',
        );
        break;
      case 'release':
        toEntity(op, op.target, { kind: 'release', id: op.lockRequestId, parent: rec.instanceId }, 'release');
        break;
    }
  }
  return { scheduled, sends };
}

function apply(
  engine: EpisodeHost,
  rt: OrchestrationRuntime,
  batch: readonly InboxItem[],
  plan: EpisodePlan,
  appendedJson: readonly string[],
): void {
  const previous = rt.record;
  const exec = { instanceId: previous.instanceId, executionId: previous.executionId };
  rt.record = { ...plan.record, outbox: rt.outbox };
  rt.lastReplay = plan.replay ?? rt.lastReplay;
  if (plan.continuedAsNew) {
    rt.resetHistoryCaches();
    engine.timers.cancelInstance(rt.id);
    const stale = rt.inbox.filter((i) => i.executionId === previous.executionId);
    rt.inbox = rt.inbox.filter((i) => i.executionId !== previous.executionId);
    for (const item of stale) item.ack?.();
    if (rt.record.pendingStart !== null) rt.inbox.unshift({ event: rt.record.pendingStart });
  } else {
    rt.record.history.push(...plan.appended);
    rt.appendPlayed(plan.appended, appendedJson);
  }
  for (const item of batch) item.ack?.();
  const terminal = isTerminal(rt.record.status);
  for (const op of plan.newOps) {
    if (op.kind === 'activity') engine.runActivity(exec, op.id, op.name, op.input);
    else if (op.kind === 'timer' && !op.canceled && !terminal && !plan.continuedAsNew)
      engine.scheduleTimer(exec.instanceId, exec.executionId, op.id, op.fireAt);
    else if (op.kind === 'subOrchestration') startChild(engine, exec, op);
  }
  if (terminal) onTerminal(engine, rt);
  if (plan.continuedAsNew) engine.scheduleEpisode(rt.id);
}

async function saveSummary(engine: EpisodeHost, rt: OrchestrationRuntime): Promise<void> {
  const snap = rt.snapshotOutbox();
  const stored = { ...rt.record, outbox: snap.items };
  await engine.checkpoint(`orchestration ${rt.id}`, () =>
    engine.store.saveOrchestration({ record: stored, appended: [], newExecution: false, consumed: [] }),
  );
  rt.markStored(stored.outbox, snap.changes);
}
