/** Reading jobs: a job, its API view, a page of them, its results and files, and the backlog of the work queues. */
import type { Clock } from '../../clock';
import { AppError } from '../../errors';
import type { Page, PageRequest } from '../../storage/list';
import type { JobFile, JobFiles } from '../envelopes/files';
import { type EnvelopeQueues, poisonQueueName, type QueueDepth } from '../envelopes/queues';
import { viewJob } from './view';
import { isFinished, type JobReader, type JobRecord, requireOwnerOf } from '../ledger/jobRecord';
import type { JobRows } from '../ledger/jobRows';
import type { ResultStore } from '../ledger/resultStore';
import type { ResultStatus, StoredResult } from '../ledger/results';
import type { ProcessorRegistry } from '../processors/processor';

export class JobReads {
  constructor(private readonly deps: JobReadsDeps) {}

  async job(id: string): Promise<JobRecord> {
    return (await this.deps.rows.require(id)).job;
  }

  /** The job for its owner or an admin; 404 for anyone else, as for no job. */
  async owned(id: string, reader: JobReader): Promise<JobRecord> {
    return requireOwnerOf(await this.job(id), reader);
  }

  /** The API view: a running job's counts come from its tally rows (one query), a finished job's from its row. */
  async view(id: string): Promise<ReturnType<typeof viewJob>> {
    return this.viewOf(await this.job(id));
  }

  /** The API view of the job for its owner or an admin (404 for anyone else). */
  async viewFor(id: string, reader: JobReader): Promise<ReturnType<typeof viewJob>> {
    return this.viewOf(await this.owned(id, reader));
  }

  /** A page of jobs in id order, each as `view` shows it: the reader's own, or everyone's for an admin. */
  async list(page: PageRequest, reader: JobReader): Promise<Page<ReturnType<typeof viewJob>>> {
    const listing = await this.deps.rows.list(page, reader.roles.admin ? undefined : reader.id);
    return { ...listing, items: await Promise.all(listing.items.map((job) => this.viewOf(job))) };
  }

  async results(
    id: string,
    list: 'results' | 'failures',
    status: ResultStatus | undefined,
    page: PageRequest,
    /** Who reads (the API: its owner or an admin, else 404); the app's own reads name no one. */
    reader?: JobReader,
  ): Promise<Page<StoredResult>> {
    await (reader === undefined ? this.job(id) : this.owned(id, reader));
    return this.deps.results.page(id, list, status, page);
  }

  async file(id: string, name: string, reader?: JobReader): Promise<JobFile> {
    await (reader === undefined ? this.job(id) : this.owned(id, reader));
    const file = await this.deps.files.readFile(id, name);
    if (file === undefined) throw new AppError('NotFound', `Job ${id} has no file ${name} (yet)`);
    return file;
  }

  /** Envelopes waiting in each work queue and its poison queue (what the gauges and the figures route report). */
  backlog(): Promise<QueueDepth[]> {
    return this.deps.queues.depths();
  }

  /** The backlog for an operator: one read of each work queue and poison queue (TALLYHO_JOBS_QUEUES of each). */
  async figures() {
    const queues = (await this.backlog()).map((d) => ({ ...d, poisonQueue: poisonQueueName(d.queue) }));
    return {
      readAt: new Date(this.deps.clock.now()).toISOString(),
      processors: [...this.deps.inApp.keys()].sort(),
      queues,
      total: {
        messages: queues.reduce((n, q) => n + q.messages, 0),
        poison: queues.reduce((n, q) => n + q.poison, 0),
      },
    };
  }

  private async viewOf(job: JobRecord): Promise<ReturnType<typeof viewJob>> {
    const progress = isFinished(job.phase) && job.round === 0 ? undefined : await this.deps.results.progress(job.id);
    return viewJob(job, progress);
  }
}

export interface JobReadsDeps {
  readonly rows: JobRows;
  readonly results: ResultStore;
  readonly files: JobFiles;
  readonly queues: EnvelopeQueues;
  readonly inApp: ProcessorRegistry;
  readonly clock: Clock;
}
