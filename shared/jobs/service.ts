/** The job use-cases behind one object, for the HTTP routes, the queue triggers and the reconciler timer. */
import { AppError } from '../errors';
import type { Page, PageRequest } from '../storage/list';
import { type JobsContext, jobsTelemetry } from './context';
import { poisonQueueName, type QueueDepth } from './envelopes/queues';
import { isFinished, type JobRecord } from './ledger/jobRecord';
import { processEnvelope, type Delivery, type EnvelopeReport } from './delivery/process';
import { processPoison, type PoisonReport } from './delivery/poison';
import { reconcile, type ReconcileReport } from './submit/reconcile';
import type { ResultStatus, StoredResult } from './ledger/resultStore';
import { retryFailed } from './submit/retryFailed';
import { checkSubmission, submitJob, type SubmitOptions, type SubmitRequest, type SubmitResult } from './submit/submit';
import { viewJob } from './http/view';
import type { JobFile } from './envelopes/files';
import { cancelJob } from './submit/cancel';
import { type Declared, type DeclareBody, declareProcessor, rotateSecret } from './processors/declare';
import {
  type CompletionReport,
  completeLease,
  extendLease,
  type Granted,
  type ItemVerdict,
  takeLease,
  type TakeOptions,
} from './delivery/leases';
import type { DeclaredProcessor } from './processors/processorDefinition';
import { type PurgeReport, purgeFinished } from './ledger/purge';
import { Pusher, type PushReport } from './delivery/pusher';

export class JobService {
  private readonly pusher: Pusher;

  constructor(readonly context: JobsContext) {
    this.pusher = new Pusher(context);
    // Each collection reads the work queues' lengths (a few requests a minute): the backlog is the
    // queues', the same whichever instance reports it. A failed read reports nothing that time.
    // Declared processors' queues are their workers' backlog, not the app's.
    const { metrics } = jobsTelemetry(context);
    const depths = (): Promise<QueueDepth[]> => this.backlog().catch(() => []);
    metrics.backlog.observe(async (report) => {
      for (const d of await depths()) report(d.messages, { 'messaging.destination.name': d.queue });
    });
    metrics.poisonBacklog.observe(async (report) => {
      for (const d of await depths()) report(d.poison, { 'messaging.destination.name': poisonQueueName(d.queue) });
    });
  }

  /** The instance is stopping: open lease long polls answer now, empty, as when their wait runs out. */
  stopping(): void {
    this.context.leaseHub.close();
  }

  /** Envelopes waiting in each work queue and its poison queue (what the gauges and the figures route report). */
  backlog(): Promise<QueueDepth[]> {
    return this.context.queues.depths();
  }

  /** The backlog for an operator: one read of each work queue and poison queue (TALLYHO_JOBS_QUEUES of each). */
  async figures() {
    const queues = (await this.backlog()).map((d) => ({ ...d, poisonQueue: poisonQueueName(d.queue) }));
    return {
      readAt: new Date(this.context.clock.now()).toISOString(),
      processors: [...this.context.processors.keys()].sort(),
      queues,
      total: {
        messages: queues.reduce((n, q) => n + q.messages, 0),
        poison: queues.reduce((n, q) => n + q.poison, 0),
      },
    };
  }

  submit(request: SubmitRequest, idempotencyKey: string | undefined, options: SubmitOptions = {}): Promise<SubmitResult> {
    return submitJob(this.context, request, idempotencyKey, options);
  }

  /** Throws the 400/413 that `submit` would answer for the request, and writes nothing. */
  async check(request: SubmitRequest): Promise<void> {
    await checkSubmission(this.context, request);
  }

  cancel(id: string): Promise<JobRecord> {
    return cancelJob(this.context, id);
  }

  declare(name: string, body: DeclareBody): Promise<Declared> {
    return declareProcessor(this.context, name, body);
  }

  rotateSecret(name: string): Promise<{ secret: string; previousUntil: number }> {
    return rotateSecret(this.context, name);
  }

  async processor(name: string): Promise<DeclaredProcessor> {
    const stored = await this.context.declared.read(name);
    if (stored === undefined) throw new AppError('NotFound', `No declared processor ${name}`);
    return stored.processor;
  }

  processorList(): Promise<DeclaredProcessor[]> {
    return this.context.declared.list();
  }

  lease(name: string, options: TakeOptions): Promise<Granted | undefined> {
    return takeLease(this.context, name, options);
  }

  extendLease(leaseId: string): Promise<{ leaseId: string; expiresAt: number }> {
    return extendLease(this.context, leaseId);
  }

  completeLease(leaseId: string, results: readonly ItemVerdict[]): Promise<CompletionReport> {
    return completeLease(this.context, leaseId, results);
  }

  /** Pushes webhook processors' batches for up to `budgetMs` (the push timer). */
  push(budgetMs: number): Promise<PushReport> {
    return this.pusher.run(budgetMs);
  }

  purge(): Promise<PurgeReport> {
    return purgeFinished(this.context);
  }

  async job(id: string): Promise<JobRecord> {
    const stored = await this.context.jobs.read(id);
    if (stored === undefined) throw new AppError('NotFound', `Job ${id} does not exist`);
    return stored.job;
  }

  /** The API view: a running job's counts come from its tally rows (one query), a finished job's from its row. */
  async view(id: string): Promise<ReturnType<typeof viewJob>> {
    const job = await this.job(id);
    const progress = isFinished(job.phase) && job.round === 0 ? undefined : await this.context.results.progress(id);
    return viewJob(job, progress);
  }

  /** A page of jobs in id order, each as `view` shows it. */
  async list(page: PageRequest): Promise<Page<ReturnType<typeof viewJob>>> {
    const listing = await this.context.jobs.list(page);
    const items = await Promise.all(
      listing.items.map(async (job) =>
        viewJob(job, isFinished(job.phase) && job.round === 0 ? undefined : await this.context.results.progress(job.id)),
      ),
    );
    return { ...listing, items };
  }

  async results(
    id: string,
    list: 'results' | 'failures',
    status: ResultStatus | undefined,
    page: PageRequest,
  ): Promise<Page<StoredResult>> {
    await this.job(id);
    return this.context.results.page(id, list, status, page);
  }

  retryFailed(id: string): Promise<JobRecord> {
    return retryFailed(this.context, id);
  }

  async file(id: string, name: string): Promise<JobFile> {
    await this.job(id);
    const file = await this.context.files.readFile(id, name);
    if (file === undefined) throw new AppError('NotFound', `Job ${id} has no file ${name} (yet)`);
    return file;
  }

  processEnvelope(text: string, delivery: Delivery): Promise<EnvelopeReport> {
    return processEnvelope(this.context, text, delivery);
  }

  processPoison(text: string, queue: string): Promise<PoisonReport> {
    return processPoison(this.context, text, queue);
  }

  reconcile(): Promise<ReconcileReport> {
    return reconcile(this.context);
  }
}
