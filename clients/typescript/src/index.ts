/** @tallyho/client: the public surface. */
export { Gates, Streams } from './admin.js';
export { Callers, type IssueOptions } from './callers.js';
export { type AccessToken, type CredentialOptions, type GetTokenOptions, type TokenCredential } from './auth.js';
export { TallyhoClient, type TallyhoClientCredentialOptions, type TallyhoClientOptions } from './client.js';
export { type Clock, systemClock } from './clock.js';
export { type CounterOptions, Counters, type CounterStats, maxIncrement } from './counters.js';
export { dammCheckDigit, type Validation, validateFormatted } from './damm.js';
export {
  type ClientErrorCode,
  type ServerErrorCode,
  TallyhoError,
  type TallyhoErrorCode,
  isServerErrorCode,
  isTallyhoError,
} from './errors.js';
export type { OperationOptions } from './options.js';
export { Gate, type GateOptions, type GateTransportMode, type Observed, type RunOptions, type WaitOptions } from './gate.js';
export { type OperationKind, type OperationState, type PollerLike, type PollerOptions } from './poller.js';
export { Job, Jobs, type JobItem, type JobOptions, type ProgressOptions, type SubmitOptions, isSettled } from './jobs.js';
export { type ApiPage, type ListOptions, type PagedAsyncIterableIterator, type PageSettings } from './paging.js';
export { type BatchContext, type BatchHandler, JobWorker, type WorkerOptions, type WorkerStats } from './worker.js';
export { verifyWebhook, type VerifyOptions, WebhookVerificationError, type WebhookHeaders } from './webhooks.js';
export {
  CachedGateReleases,
  type GateReleases,
  type IsReleasedOptions,
  type ReleaseCacheOptions,
  type ReleaseFallback,
} from './releases.js';
export { TestGateReleases } from './testing.js';
export { Schedules, type ListSchedulesOptions } from './schedules.js';
export { Sequence, type SequenceOptions, type SequenceStats, maxReservation } from './sequence.js';
export { Sequences } from './sequences.js';
export { type ServerEvent, readEvents } from './sse.js';
export { type Ack, type AppendOptions, type AppendOutcome, Stream, type StreamOptions } from './stream.js';
export {
  type Answer,
  type FetchLike,
  type KeyLevel,
  type RequestSpec,
  type RetryOptions,
  Transport,
  type TransportOptions,
  segment,
} from './transport.js';
export type * from './types.js';
