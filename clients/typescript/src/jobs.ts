/**
 * Batched jobs: submit items once (an Idempotency-Key makes a resubmission return the same job),
 * follow progress as an async iterator until the job settles, and page through results and failures
 * without handling cursors.
 */
import { newIdempotencyKey } from './ids.js';
import type { OperationOptions } from './options.js';
import { OperationPoller, type PollerLike, type PollerOptions, retryAfterMs } from './poller.js';
import { readFigures } from './figures.js';
import { type ListOptions, type PagedAsyncIterableIterator, pagedList } from './paging.js';
import { segment, type Transport } from './transport.js';
import type {
  JobFailure,
  JobFailuresPage,
  JobFigures,
  JobList,
  JobResult,
  JobResultsPage,
  JobAccepted,
  JobSubmission,
  JobView,
  ProcessorDeclaration,
  ProcessorView,
} from './types.js';
import { type BatchHandler, JobWorker, type WorkerOptions } from './worker.js';

export type JobItem = JobSubmission['items'][number];

export interface SubmitOptions extends OperationOptions {
  /** Reuse it to make a resubmission (e.g. after a crash) return the same job. Default: a new key. */
  readonly idempotencyKey?: string;
}

export interface ProgressOptions extends OperationOptions {
  /** Between reads (default 1 s). */
  readonly intervalMs?: number;
}

const settled = new Set<JobView['state']>(['completed', 'completedWithFailures', 'cancelled']);

export function isSettled(job: JobView): boolean {
  return settled.has(job.state);
}

export interface JobOptions {
  /**
   * Read results and failures through the admin-level routes (`…/privileged`, the admin key): any
   * caller's job, as an operator reads it. Without it the job's owner (or an admin identity) reads it.
   */
  readonly admin?: boolean;
}

export class Job {
  constructor(
    private readonly transport: Transport,
    readonly id: string,
    private readonly options: JobOptions = {},
  ) {}

  /** Where a list of the job is read, and with which key. */
  private listOf(list: 'results' | 'failures'): { path: string; key?: 'admin' } {
    return this.options.admin === true ? { path: `${this.path}/${list}/privileged`, key: 'admin' } : { path: `${this.path}/${list}` };
  }

  private get path(): string {
    return `jobs/${segment(this.id)}`;
  }

  async get(options: OperationOptions = {}): Promise<JobView> {
    return (await this.transport.json<JobView>({ method: 'GET', path: this.path, signal: options.abortSignal })).body;
  }

  /** The job each time its progress changes, ending with the settled job. */
  async *progress(options: ProgressOptions = {}): AsyncGenerator<JobView, void, undefined> {
    let last = '';
    for (;;) {
      const job = await this.get(options);
      const fingerprint = JSON.stringify([job.state, job.round, job.totals]);
      if (fingerprint !== last) {
        last = fingerprint;
        yield job;
      }
      if (isSettled(job)) return;
      await this.transport.clock.sleep(options.intervalMs ?? 1000, options.abortSignal);
    }
  }

  /** Waits until the job settles and returns it. */
  async settled(options: ProgressOptions = {}): Promise<JobView> {
    let latest: JobView | undefined;
    for await (const job of this.progress(options)) latest = job;
    return latest as JobView;
  }

  /** The item results, in item-id order, optionally of one status. */
  results(options: ListOptions & { status?: JobResult['status'] } = {}): PagedAsyncIterableIterator<JobResult, JobResultsPage> {
    return pagedList(this.transport, { ...this.listOf('results'), query: { status: options.status } }, options);
  }

  /** The failed items with their reasons, in item-id order. */
  failures(options: ListOptions = {}): PagedAsyncIterableIterator<JobFailure, JobFailuresPage> {
    return pagedList(this.transport, this.listOf('failures'), options);
  }

  /**
   * Cancels the job and returns a poller of it, done once it is `cancelled`: the server answers as
   * soon as the job is `cancelling` (its leases are refused from then on) and writes its items
   * without a result `cancelled` in the background. With `resumeFrom` (a poller's `toString()`)
   * nothing is sent: the poller follows that cancel again.
   */
  async beginCancel(options: PollerOptions = {}): Promise<PollerLike<JobView>> {
    if (options.resumeFrom !== undefined) {
      return OperationPoller.resume<JobView>(this.transport, 'jobCancel', options.resumeFrom, isSettled, options.intervalMs);
    }
    const answer = await this.transport.json<JobAccepted>({
      method: 'DELETE',
      path: this.path,
      idempotent: true,
      signal: options.abortSignal,
    });
    const { statusUri, ...view } = answer.body;
    const intervalMs = options.intervalMs ?? retryAfterMs(answer.headers, 1000);
    return new OperationPoller<JobView>(this.transport, { kind: 'jobCancel', statusUri, intervalMs, latest: view }, isSettled);
  }

  /** Cancels the job and waits until it is `cancelled` (`beginCancel` returns the poller instead). */
  async cancel(options: PollerOptions = {}): Promise<JobView> {
    return (await this.beginCancel(options)).pollUntilDone(options);
  }

  /** Runs the failed items of a completed job again (a new round). */
  async retryFailed(options: OperationOptions = {}): Promise<JobView> {
    const answer = await this.transport.json<JobView>({
      method: 'POST',
      path: `${this.path}/retry-failed`,
      key: 'admin',
      idempotent: true,
      signal: options.abortSignal,
    });
    return answer.body;
  }
}

export class Jobs {
  constructor(private readonly transport: Transport) {}

  /**
   * Submits the items to `processor` and returns the job as accepted, without waiting: a job may run
   * for hours, and what a submitter usually does next is keep its id. `beginSubmit` waits.
   * Retries (and a resubmission with the same key) return the same job.
   */
  async submit(
    processor: JobSubmission['processor'],
    items: readonly JobItem[],
    options: SubmitOptions = {},
  ): Promise<Job & { readonly view: JobView }> {
    const answer = await this.post(processor, items, options);
    return Object.assign(new Job(this.transport, answer.body.id), { view: answer.body });
  }

  /**
   * Submits the items and returns a poller of the job, done once it settles (`completed`,
   * `completedWithFailures` or `cancelled`): `await poller.pollUntilDone({ abortSignal })` is the
   * settled job. With `resumeFrom` (a poller's `toString()`) nothing is submitted: the poller
   * follows that job again.
   */
  async beginSubmit(
    processor: JobSubmission['processor'],
    items: readonly JobItem[],
    options: SubmitOptions & PollerOptions = {},
  ): Promise<PollerLike<JobView>> {
    if (options.resumeFrom !== undefined) {
      return OperationPoller.resume<JobView>(this.transport, 'jobSubmit', options.resumeFrom, isSettled, options.intervalMs);
    }
    const answer = await this.post(processor, items, options);
    const { statusUri, ...view } = answer.body;
    const intervalMs = options.intervalMs ?? retryAfterMs(answer.headers, 2000);
    return new OperationPoller<JobView>(this.transport, { kind: 'jobSubmit', statusUri, intervalMs, latest: view }, isSettled);
  }

  private post(processor: JobSubmission['processor'], items: readonly JobItem[], options: SubmitOptions) {
    return this.transport.json<JobAccepted>({
      method: 'POST',
      path: 'jobs',
      body: { processor, items },
      idempotencyKey: options.idempotencyKey ?? newIdempotencyKey(),
      signal: options.abortSignal,
    });
  }

  /** One job; `{ admin: true }` reads its results and failures as an operator (any caller's job). */
  job(id: string, options: JobOptions = {}): Job {
    return new Job(this.transport, id, options);
  }

  /**
   * Starts a worker of an external processor: `handler` gets each leased batch and answers one result
   * per item. `await worker.stop()` drains it (see ./worker.ts).
   */
  worker(processor: string, handler: BatchHandler, options: WorkerOptions = {}): JobWorker {
    return new JobWorker(this.transport, processor, handler, options);
  }

  /** Declares (or changes) an external or webhook processor (admin). A new webhook processor's answer carries its secret, once. */
  async declareProcessor(name: string, declaration: ProcessorDeclaration, options: OperationOptions = {}): Promise<ProcessorView> {
    const answer = await this.transport.json<ProcessorView>({
      method: 'PUT',
      path: `processors/${segment(name)}`,
      body: declaration,
      key: 'admin',
      idempotent: true,
      signal: options.abortSignal,
    });
    return answer.body;
  }

  /** Jobs with their progress, in job id order (admin): time-ordered ids oldest first, then Idempotency-Key jobs. */
  list(options: ListOptions = {}): PagedAsyncIterableIterator<JobView, JobList> {
    return pagedList(this.transport, { path: 'jobs', key: 'admin' }, options);
  }

  /** Envelopes waiting and poisoned per work queue, read now (admin). */
  figures(options: OperationOptions = {}): Promise<JobFigures> {
    return readFigures<JobFigures>(this.transport, 'jobs', options.abortSignal);
  }
}
