/** The API's shapes, named for callers; all come from the generated OpenAPI types. */
import type { components } from './generated/openapi.js';

type Schemas = components['schemas'];

export type Problem = Schemas['Problem'];
export type SequenceView = Schemas['Sequence'];
export type SequenceList = Schemas['SequenceList'];
export type SequenceNumbers = Schemas['SequenceNumbers'];
export type SequenceSettings = Schemas['SequenceSettings'];
export type SequenceSettingsInput = Schemas['SequenceSettingsInput'];
export type CounterView = Schemas['Counter'];
export type CounterList = Schemas['CounterList'];
export type CounterFigures = Schemas['CounterFigures'];
export type CounterValue = Schemas['CounterValue'];
export type CounterSettings = Schemas['CounterSettingsRequest'];
export type GateView = Schemas['Gate'];
export type GateList = Schemas['GateList'];
export type GateAuditRecord = Schemas['GateAuditRecord'];
export type GateAuditPage = Schemas['GateAuditPage'];
export type GateReleaseResult = Schemas['GateReleaseResult'];
export type GateResetResult = Schemas['GateResetResult'];
export type GateWaitResult = Schemas['GateWaitResult'];
export type GateRunRequest = Schemas['GateRunRequest'];
export type GateRunStarted = Schemas['GateRunStarted'];
export type GateRunView = Schemas['GateRun'];
export type ScheduleView = Schemas['Schedule'];
export type ScheduleList = Schemas['ScheduleList'];
export type ScheduleFigures = Schemas['ScheduleFigures'];
export type ScheduleTrigger = Schemas['ScheduleTrigger'];
export type CreateSchedule = Schemas['CreateSchedule'];
export type JobView = Schemas['Job'];
export type JobAccepted = Schemas['JobAccepted'];
export type JobList = Schemas['JobList'];
export type JobFigures = Schemas['JobFigures'];
export type JobResult = Schemas['JobResult'];
export type JobFailure = Schemas['JobFailure'];
export type JobResultsPage = Schemas['JobResultsPage'];
export type JobFailuresPage = Schemas['JobFailuresPage'];
export type JobSubmission = Schemas['JobSubmission'];
export type LeaseView = Schemas['Lease'];
export type LeasedItem = LeaseView['items'][number];
export type LeaseCompletion = Schemas['LeaseCompletion'];
export type LeaseCompletionResult = Schemas['LeaseCompletionResult'];
export type ItemResult = LeaseCompletion['results'][number];
export type ProcessorView = Schemas['Processor'];
/** Fields with a server-side default may be left out (the generated type, like the response form, requires them). */
type WithDefaultsOptional<D> = D extends unknown ? Partial<Omit<D, 'type' | 'url'>> & Pick<D, Extract<keyof D, 'type' | 'url'>> : never;
export type ProcessorDeclaration = WithDefaultsOptional<Schemas['ProcessorDeclaration']>;
export type StreamEvent = Schemas['StreamEvent'];
export type StreamAppendResult = Schemas['StreamAppendResult'];
export type StreamFlushResult = Schemas['StreamFlushResult'];
export type StreamView = Schemas['StreamView'];
export type StreamRoute = StreamRouteList['items'][number];
export type StreamRouteList = Schemas['StreamRouteList'];
export type StreamRemapResult = Schemas['StreamRemapResult'];
/** Any JSON value (the generated `JsonValue` is `unknown`: its recursive alias does not compile). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
