/**
 * Status payloads as the extension's HTTP API returns them (`StatusResponsePayload`): JSON values
 * parsed back from the stored text the way .NET's `ConvertToJToken` does (text that is not JSON
 * stays a string), times as `yyyy-MM-ddTHH:mm:ssZ`, and `historyEvents` only when asked for.
 */
import { EventType, type HistoryEvent } from './protocol';
import type { OrchestrationRecord, RuntimeStatus } from './records';

export interface StatusPayload {
  readonly name: string;
  readonly instanceId: string;
  readonly runtimeStatus: RuntimeStatus;
  readonly input: unknown;
  readonly customStatus: unknown;
  readonly output: unknown;
  readonly createdTime: string;
  readonly lastUpdatedTime: string;
  readonly historyEvents?: readonly Record<string, unknown>[];
}

export interface StatusOptions {
  readonly showInput?: boolean;
  readonly showHistory?: boolean;
  readonly showHistoryOutput?: boolean;
}

export function toJToken(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export function statusTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

export function statusPayload(rec: OrchestrationRecord, options: StatusOptions = {}): StatusPayload {
  return {
    name: rec.name,
    instanceId: rec.instanceId,
    runtimeStatus: rec.status,
    input: options.showInput === false ? null : toJToken(rec.input),
    customStatus: toJToken(rec.customStatus),
    output: toJToken(rec.output),
    createdTime: statusTime(rec.createdTime),
    lastUpdatedTime: statusTime(rec.lastUpdatedTime),
    ...(options.showHistory === true ? { historyEvents: historyForStatus(rec.history, options.showHistoryOutput === true) } : {}),
  };
}

const eventNames = Object.fromEntries(Object.entries(EventType).map(([name, value]) => [value, name])) as Record<number, string>;

/**
 * The extension's `ConvertHistoryToJsonArray`, approximately: scheduling and episode markers are
 * folded away, completions carry the function name and when they were scheduled.
 */
function historyForStatus(history: readonly HistoryEvent[], withOutput: boolean): Record<string, unknown>[] {
  const scheduled = new Map<number, { name: string; at: string }>();
  const out: Record<string, unknown>[] = [];
  for (const e of history) {
    const base = { EventType: eventNames[e.EventType] ?? String(e.EventType), Timestamp: e.Timestamp };
    switch (e.EventType) {
      case EventType.TaskScheduled:
      case EventType.SubOrchestrationInstanceCreated:
        scheduled.set(e.EventId, { name: e.Name, at: e.Timestamp });
        break;
      case EventType.ExecutionStarted:
        out.push({ ...base, FunctionName: e.Name, ...(withOutput ? { Input: toJToken(e.Input) } : {}) });
        break;
      case EventType.TaskCompleted:
      case EventType.SubOrchestrationInstanceCompleted: {
        const s = scheduled.get(e.TaskScheduledId);
        out.push({ ...base, FunctionName: s?.name, ScheduledTime: s?.at, ...(withOutput ? { Result: toJToken(e.Result) } : {}) });
        break;
      }
      case EventType.TaskFailed:
      case EventType.SubOrchestrationInstanceFailed: {
        const s = scheduled.get(e.TaskScheduledId);
        out.push({ ...base, FunctionName: s?.name, ScheduledTime: s?.at, Reason: e.Reason, Details: e.Details });
        break;
      }
      case EventType.TimerFired:
        out.push({ ...base, FireAt: e.FireAt });
        break;
      case EventType.EventRaised:
        out.push({ ...base, Name: e.Name, ...(withOutput ? { Input: toJToken(e.Input) } : {}) });
        break;
      case EventType.ExecutionCompleted:
        out.push({ ...base, OrchestrationStatus: e.OrchestrationStatus, ...(withOutput ? { Result: toJToken(e.Result) } : {}) });
        break;
      case EventType.ExecutionTerminated:
        out.push({ ...base, Input: toJToken(e.Input) });
        break;
      case EventType.TimerCreated:
      case EventType.OrchestratorStarted:
      case EventType.OrchestratorCompleted:
      case EventType.EventSent:
      case EventType.ExecutionSuspended:
      case EventType.ExecutionResumed:
        break;
    }
  }
  return out;
}

export interface InstanceQuery {
  readonly createdTimeFrom?: number | undefined;
  readonly createdTimeTo?: number | undefined;
  readonly runtimeStatus?: readonly string[] | undefined;
  readonly instanceIdPrefix?: string | undefined;
}

export function matches(rec: OrchestrationRecord, query: InstanceQuery): boolean {
  if (query.createdTimeFrom !== undefined && rec.createdTime < query.createdTimeFrom) return false;
  if (query.createdTimeTo !== undefined && rec.createdTime > query.createdTimeTo) return false;
  if (query.runtimeStatus !== undefined && query.runtimeStatus.length > 0 && !query.runtimeStatus.includes(rec.status)) return false;
  if (query.instanceIdPrefix !== undefined && !rec.instanceId.startsWith(query.instanceIdPrefix)) return false;
  return true;
}
