/**
 * The out-of-process Durable protocol as durable-functions 3.x speaks it: DTFx history events
 * (PascalCase, numeric `EventType`) going in, `OrchestratorState` actions coming out, and the entity
 * batch request/response. Shapes follow what the JS library reads and writes (lib/src/history,
 * lib/src/actions, entities/Entity.js), which is all the devhost has to agree with.
 */

export const EventType = {
  ExecutionStarted: 0,
  ExecutionCompleted: 1,
  ExecutionTerminated: 3,
  TaskScheduled: 4,
  TaskCompleted: 5,
  TaskFailed: 6,
  SubOrchestrationInstanceCreated: 7,
  SubOrchestrationInstanceCompleted: 8,
  SubOrchestrationInstanceFailed: 9,
  TimerCreated: 10,
  TimerFired: 11,
  OrchestratorStarted: 12,
  OrchestratorCompleted: 13,
  EventSent: 14,
  EventRaised: 15,
  ExecutionSuspended: 19,
  ExecutionResumed: 20,
} as const;

/** Structured failure (durable-functions 3.5 + extension PR #3451): read by JS as `TaskFailedError`. */
export interface FailureDetails {
  readonly ErrorType: string;
  readonly ErrorMessage: string;
  readonly StackTrace?: string | undefined;
  readonly IsNonRetriable?: boolean;
  readonly Properties?: Record<string, unknown> | undefined;
}

/** `IsPlayed` is added only in the payload sent to the orchestrator (see `withIsPlayed`). */
interface EventBase {
  readonly EventId: number;
  readonly Timestamp: string;
}

export type HistoryEvent = EventBase &
  (
    | {
        readonly EventType: typeof EventType.ExecutionStarted;
        readonly Name: string;
        readonly Version: string | null;
        readonly Input: string | null;
        readonly OrchestrationInstance: { readonly InstanceId: string; readonly ExecutionId: string };
        readonly ParentInstance: {
          readonly OrchestrationInstance: { readonly InstanceId: string; readonly ExecutionId: string };
          readonly TaskScheduleId: number;
        } | null;
      }
    | {
        readonly EventType: typeof EventType.ExecutionCompleted;
        readonly OrchestrationStatus: 'Completed' | 'Failed' | 'Terminated';
        readonly Result: string | null;
        readonly FailureDetails?: FailureDetails | undefined;
      }
    | { readonly EventType: typeof EventType.ExecutionTerminated; readonly Input: string | null }
    | { readonly EventType: typeof EventType.TaskScheduled; readonly Name: string; readonly Input: string }
    | { readonly EventType: typeof EventType.TaskCompleted; readonly TaskScheduledId: number; readonly Result: string | null }
    | {
        readonly EventType: typeof EventType.TaskFailed;
        readonly TaskScheduledId: number;
        readonly Reason: string;
        readonly Details: string;
        readonly FailureDetails?: FailureDetails | undefined;
      }
    | {
        readonly EventType: typeof EventType.SubOrchestrationInstanceCreated;
        readonly Name: string;
        readonly InstanceId: string;
        readonly Input: string | null;
      }
    | {
        readonly EventType: typeof EventType.SubOrchestrationInstanceCompleted;
        readonly TaskScheduledId: number;
        readonly Result: string | null;
      }
    | {
        readonly EventType: typeof EventType.SubOrchestrationInstanceFailed;
        readonly TaskScheduledId: number;
        readonly Reason: string;
        readonly Details: string;
        readonly FailureDetails?: FailureDetails | undefined;
      }
    | { readonly EventType: typeof EventType.TimerCreated; readonly FireAt: string }
    | { readonly EventType: typeof EventType.TimerFired; readonly TimerId: number; readonly FireAt: string }
    | { readonly EventType: typeof EventType.OrchestratorStarted }
    | { readonly EventType: typeof EventType.OrchestratorCompleted }
    | { readonly EventType: typeof EventType.EventSent; readonly InstanceId: string; readonly Name: string; readonly Input: string }
    | { readonly EventType: typeof EventType.EventRaised; readonly Name: string; readonly Input: string | null }
    | { readonly EventType: typeof EventType.ExecutionSuspended; readonly Reason: string | null }
    | { readonly EventType: typeof EventType.ExecutionResumed; readonly Reason: string | null }
  );

export const ActionType = {
  CallActivity: 0,
  CallActivityWithRetry: 1,
  CallSubOrchestrator: 2,
  CallSubOrchestratorWithRetry: 3,
  ContinueAsNew: 4,
  CreateTimer: 5,
  WaitForExternalEvent: 6,
  CallEntity: 7,
  CallHttp: 8,
  SignalEntity: 9,
  WhenAny: 11,
  WhenAll: 12,
  LockEntities: 13,
  ReleaseEntities: 14,
} as const;

export interface RetryOptions {
  readonly firstRetryIntervalInMilliseconds: number;
  readonly maxNumberOfAttempts: number;
  readonly backoffCoefficient?: number;
  readonly maxRetryIntervalInMilliseconds?: number;
  readonly retryTimeoutInMilliseconds?: number;
}

export interface EntityRef {
  readonly name: string;
  readonly key: string;
}

export type Action =
  | { readonly actionType: typeof ActionType.CallActivity; readonly functionName: string; readonly input?: unknown }
  | {
      readonly actionType: typeof ActionType.CallActivityWithRetry;
      readonly functionName: string;
      readonly retryOptions: RetryOptions;
      readonly input?: unknown;
    }
  | {
      readonly actionType: typeof ActionType.CallSubOrchestrator;
      readonly functionName: string;
      readonly instanceId?: string;
      readonly version?: string;
      readonly input?: unknown;
    }
  | {
      readonly actionType: typeof ActionType.CallSubOrchestratorWithRetry;
      readonly functionName: string;
      readonly retryOptions: RetryOptions;
      readonly instanceId?: string;
      readonly version?: string;
      readonly input?: unknown;
    }
  | { readonly actionType: typeof ActionType.ContinueAsNew; readonly input?: unknown }
  | { readonly actionType: typeof ActionType.CreateTimer; readonly fireAt: string; readonly isCanceled?: boolean }
  | { readonly actionType: typeof ActionType.WaitForExternalEvent; readonly externalEventName: string }
  | { readonly actionType: typeof ActionType.CallEntity; readonly instanceId: string; readonly operation: string; readonly input?: unknown }
  | { readonly actionType: typeof ActionType.CallHttp; readonly httpRequest: unknown }
  | {
      readonly actionType: typeof ActionType.SignalEntity;
      readonly instanceId: string;
      readonly operation: string;
      readonly input?: unknown;
    }
  | { readonly actionType: typeof ActionType.WhenAny; readonly compoundActions: readonly Action[] }
  | { readonly actionType: typeof ActionType.WhenAll; readonly compoundActions: readonly Action[] }
  | { readonly actionType: typeof ActionType.LockEntities; readonly lockRequestId: string; readonly lockSet: readonly EntityRef[] }
  | { readonly actionType: typeof ActionType.ReleaseEntities };

/** What an orchestrator invocation returns (`OrchestratorState.js`), V2+ shape: one action list. */
export interface OrchestratorState {
  readonly isDone: boolean;
  readonly actions: readonly (readonly Action[])[];
  readonly output?: unknown;
  readonly error?: string;
  readonly customStatus?: unknown;
  readonly failureDetails?: FailureDetails;
  readonly schemaVersion?: number;
}

/** Entity batch trigger payload (extension `EntityContextToString`). */
export interface EntityBatchRequest {
  readonly self: EntityRef;
  readonly exists: boolean;
  readonly state: string | null;
  readonly batch: readonly { readonly name: string; readonly input: string | null; readonly isSignal: boolean }[];
}

export interface EntityBatchResult {
  readonly entityExists: boolean;
  readonly entityState?: string | null;
  readonly results: readonly { readonly isError: boolean; readonly result?: string; readonly duration?: number }[];
  readonly signals: readonly { readonly target: EntityRef; readonly name: string; readonly input?: string }[];
}

let lastIso = { ms: Number.NaN, text: '' };

/** ISO time text for event timestamps; an episode stamps many events with one instant, so the last is reused. */
export function iso(ms: number): string {
  if (ms !== lastIso.ms) lastIso = { ms, text: new Date(ms).toISOString() };
  return lastIso.text;
}

/**
 * `@name@key` with the name exactly as the caller gave it. The extension keeps the case of a name it
 * deserializes (an entity's signals, a lock set); only its `EntityId` constructor, used for the client
 * HTTP API, lower-cases (see `clientSchedulerId`). JS lower-cases the names of orchestration
 * `callEntity`/`signalEntity` itself (`EntityId.getSchedulerIdFromEntityId`). So an entity that
 * signals `streamLedger` reaches `@streamLedger@…`, which a client never reads
 * (devhost/docs/real-host.md#entity-ids; azure-functions-durable-js#170).
 */
export function schedulerId(entity: EntityRef): string {
  return `@${entity.name}@${entity.key}`;
}

/** The instance a client addresses through the HTTP API: the extension's `EntityId` lower-cases the name. */
export function clientSchedulerId(entity: EntityRef): string {
  return schedulerId({ name: entity.name.toLowerCase(), key: entity.key });
}

export function parseSchedulerId(id: string): EntityRef {
  const at = id.indexOf('@', 1);
  if (!id.startsWith('@') || at < 0) throw new Error(`Not an entity id: ${id}`);
  return { name: id.slice(1, at), key: id.slice(at + 1) };
}
