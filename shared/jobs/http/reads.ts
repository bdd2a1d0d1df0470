/** Reading jobs: a job, its API view, a page of them, its results and files, and the backlog of the work queues. */
import type { Clock } from '../../clock';
import { AppError } from '../../errors';
import type { Page, PageRequest } from '../../storage/list';
import type { JobFile, JobFiles } from '../envelopes/files';
import { type EnvelopeQueues, peekLimit, type QueueDepth } from '../envelopes/queues';
import { poisonQueueName } from '../queueNames';
import { viewJob } from './view';
import { isFinished, type JobReader, type JobRecord, requireOwnerOf } from '../ledger/jobRecord';
import type { JobRows } from '../ledger/jobRows';
import type { ResultStore } from '../ledger/resultStore';
import type { ResultStatus, StoredResult } from '../ledger/results';
import type { ProcessorRegistry } from '../processors/processor';
import { processorLaneName, processorQueueName } from '../processors/processorDefinition';
import type { ProcessorStore } from '../processors/processorStore';

/**
 * A declared processor's queue, read now. `backlog` counts every envelope not done (waiting, leased,
 * or waiting out a retry's back-off: the approximate length); `leased` is those not visible (held by
 * a lease, or waiting out a back-off), known only while fewer than 32 are visible (one peek shows at
 * most 32), otherwise null; `oldestAgeSeconds` is the age of the oldest visible envelope (0: none).
 */
export interface ProcessorBacklog {
  readonly processor: string;
  readonly type: 'external' | 'webhook';
  readonly queue: string;
  readonly backlog: number;
  readonly waiting: number;
  readonly waitingAtLeast: boolean;
  readonly leased: number | null;
  readonly oldestAgeSeconds: number;
}

/** Seconds since `queuedAt` on the app's clock, 0 when nothing waits (never negative: clocks differ a little). */
function ageSeconds(queuedAt: number | undefined, now: number): number {
  return queuedAt === undefined ? 0 : Math.max(0, Math.round((now - queuedAt) / 1000));
}

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

  /** Each declared processor's queue and retry lane: two reads each (its length and a peek at its front). */
  async processorBacklogs(): Promise<ProcessorBacklog[]> {
    const declared = (await this.deps.declared.list()).sort((a, b) => a.name.localeCompare(b.name));
    return Promise.all(
      declared.map(async (p) => {
        const queue = processorQueueName(this.deps.queuePrefix, p.name);
        // Its retry lane holds the leased batches and those waiting out a back-off: the backlog counts both queues.
        const looks = await Promise.all(
          [queue, processorLaneName(this.deps.queuePrefix, p.name)].map((q) => this.deps.queues.look(q, peekLimit)),
        );
        const look = {
          messages: looks.reduce((n, l) => n + l.messages, 0),
          visible: looks.reduce((n, l) => n + l.visible, 0),
          oldestQueuedAt: Math.min(...looks.map((l) => l.oldestQueuedAt ?? Infinity)),
        };
        const waitingAtLeast = looks.some((l) => l.visible >= peekLimit);
        return {
          processor: p.name,
          type: p.type,
          queue,
          backlog: look.messages,
          waiting: look.visible,
          waitingAtLeast,
          leased: waitingAtLeast ? null : Math.max(0, look.messages - look.visible),
          oldestAgeSeconds: ageSeconds(Number.isFinite(look.oldestQueuedAt) ? look.oldestQueuedAt : undefined, this.deps.clock.now()),
        };
      }),
    );
  }

  /** The backlog for an operator: each work queue and poison queue (TALLYHO_JOBS_QUEUES of each), and each declared processor's queue. */
  async figures() {
    const [depths, declared] = await Promise.all([this.backlog(), this.processorBacklogs()]);
    const now = this.deps.clock.now();
    const queues = depths.map(({ oldestQueuedAt, ...d }) => ({
      ...d,
      oldestAgeSeconds: ageSeconds(oldestQueuedAt, now),
      poisonQueue: poisonQueueName(d.queue),
    }));
    return {
      readAt: new Date(now).toISOString(),
      processors: [...this.deps.inApp.keys()].sort(),
      queues,
      total: {
        messages: queues.reduce((n, q) => n + q.messages, 0),
        poison: queues.reduce((n, q) => n + q.poison, 0),
        oldestAgeSeconds: queues.reduce((n, q) => Math.max(n, q.oldestAgeSeconds), 0),
      },
      declared,
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
  readonly declared: ProcessorStore;
  /** TALLYHO_JOBS_QUEUE_PREFIX: declared processors' queues are `<prefix>-x-<name>`. */
  readonly queuePrefix: string;
  readonly clock: Clock;
}
