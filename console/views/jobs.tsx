/**
 * Jobs, grouped by processor: progress bars coloured by outcome (a job whose every item failed, or a
 * cancelled one, must not look like a success), failures with their reasons (poisoned envelopes
 * included), each job's results, retry of failed items.
 */
import { useState } from 'preact/hooks';

import { tallyho } from '../api';
import { ConfirmButton, formatDuration, Num, ProblemNotice, Section, When } from '../components';
import type { PagedAsyncIterableIterator } from '../../clients/typescript/src/index.js';
import { Figures, type Figure } from '../figures';
import { useAction, usePagedPolling, usePolling } from '../hooks';
import type { JobFailure, JobFigures, JobResult, JobView, Listing } from '../types';

const stateLabels: Record<JobView['state'], string> = {
  accepted: 'accepted',
  running: 'running',
  cancelling: 'cancelling',
  completed: 'completed',
  completedWithFailures: 'completed with failures',
  cancelled: 'cancelled',
};

/** Failures or results shown per job; past it the list says so. */
const shown = 50;

/** The first page of a list, and whether more follow. */
async function firstRows<T>(list: PagedAsyncIterableIterator<T>): Promise<{ rows: T[]; more: boolean }> {
  for await (const page of list.byPage({ maxPageSize: shown })) return { rows: page.items, more: page.continuationToken !== undefined };
  return { rows: [], more: false };
}

/** Jobs shown per "Show more". */
const jobsShown = 20;

/**
 * The most recently accepted jobs: the list pages in job id order (keyed jobs after the time-ordered
 * ones), so the console reads it whole — finished jobs are purged after their retention, which
 * bounds it — and shows the newest.
 */
async function loadJobs(pages: number, signal: AbortSignal): Promise<JobsListing> {
  const all: JobView[] = [];
  const unreadable: Listing<JobView>['unreadable'] = [];
  for await (const page of tallyho().jobs.list({ signal }).byPage({ maxPageSize: 1000 })) {
    all.push(...page.items);
    unreadable.push(...page.unreadable);
  }
  const newest = all.sort((a, b) => b.timings.acceptedAt.localeCompare(a.timings.acceptedAt));
  return { items: newest.slice(0, pages * jobsShown), unreadable, more: newest.length > pages * jobsShown, failures: failuresOf(all) };
}

/** Failed items per processor over every job listed (finished jobs until they are purged), and how many jobs have any. */
interface ProcessorFailures {
  readonly items: number;
  readonly jobs: number;
}
type JobsListing = Listing<JobView> & { readonly failures: ReadonlyMap<string, ProcessorFailures> };

function failuresOf(jobs: readonly JobView[]): Map<string, ProcessorFailures> {
  const failures = new Map<string, ProcessorFailures>();
  for (const job of jobs) {
    const before = failures.get(job.processor) ?? { items: 0, jobs: 0 };
    const failed = job.totals.failed;
    failures.set(job.processor, { items: before.items + failed, jobs: before.jobs + (failed > 0 ? 1 : 0) });
  }
  return failures;
}

type Outcome = 'inProgress' | 'succeeded' | 'mixed' | 'failed' | 'cancelled';

/** How a job's bar looks: only a job with successes and nothing else wrong gets the accent colour. */
function outcomeOf(job: JobView): Outcome {
  const { succeeded, failed, cancelled } = job.totals;
  if (job.state === 'cancelled' || job.state === 'cancelling') return 'cancelled';
  if (job.state !== 'completed' && job.state !== 'completedWithFailures') return 'inProgress';
  if (failed > 0 && succeeded === 0) return 'failed';
  return failed > 0 || cancelled > 0 ? 'mixed' : 'succeeded';
}

/** A part of the bar as a CSS width. */
function share(part: number, items: number): string {
  return items === 0 ? '0%' : `${(part / items) * 100}%`;
}

function Results({ job }: { job: JobView }) {
  const results = usePolling(
    (signal) => firstRows<JobResult>(tallyho().jobs.job(job.id, { admin: true }).results({ signal })),
    job.state === 'running' ? 3000 : 30000,
    `${job.id}:${job.totals.succeeded + job.totals.failed + job.totals.cancelled}`,
  );
  const rows = results.data?.rows ?? [];
  return (
    <div class="results" data-testid="job-results">
      <ProblemNotice error={results.error} />
      {rows.length === 0 && results.data !== undefined ? <p class="muted">No results recorded yet.</p> : null}
      {rows.length > 0 ? (
        <ul>
          {rows.map((r) => (
            <li key={r.id}>
              <strong>{r.id}</strong> <span class={`badge ${r.status}`}>{r.status}</span>{' '}
              {r.status === 'succeeded' ? <code class="small">{JSON.stringify(r.output ?? null)}</code> : null}
              {r.reason === undefined ? null : <div class="reason">{r.reason}</div>}
            </li>
          ))}
        </ul>
      ) : null}
      {results.data?.more === true ? (
        <p class="hint">
          Showing the first {rows.length} results; all of them: <code>GET {job.links.results ?? `/api/jobs/${job.id}/results`}</code>
        </p>
      ) : null}
    </div>
  );
}

function Failures({ job }: { job: JobView }) {
  const failures = usePolling(
    (signal) => firstRows<JobFailure>(tallyho().jobs.job(job.id, { admin: true }).failures({ signal })),
    job.state === 'running' ? 3000 : 30000,
    `${job.id}:${job.totals.failed}`,
  );
  const rows = failures.data?.rows ?? [];
  return (
    <div class="failures">
      <ProblemNotice error={failures.error} />
      {rows.length === 0 && failures.data !== undefined ? <p class="muted">No failures recorded.</p> : null}
      {rows.length > 0 ? (
        <ul>
          {rows.map((f) => (
            <li key={f.id} class={f.code === 'poisoned' ? 'poisoned' : undefined}>
              <strong>{f.id}</strong> <code>{f.code}</code>
              {f.code === 'poisoned' ? <span class="badge failed">poison</span> : null}
              <span class="muted small">
                {' '}
                {/* A poisoned item's envelope failed as a whole; the reason counts its deliveries, so an
                    item attempt count beside it would read as a contradiction. */}
                {f.code === 'poisoned' ? '' : `after ${f.attempts} attempt${f.attempts === 1 ? '' : 's'}, `}envelope {f.envelope}
              </span>
              <div class="reason">{f.reason}</div>
            </li>
          ))}
        </ul>
      ) : null}
      {failures.data?.more === true ? <p class="hint">Showing the first {rows.length} failures.</p> : null}
    </div>
  );
}

function JobCard({ job, onChanged }: { job: JobView; onChanged: () => void }) {
  const [showFailures, setShowFailures] = useState(false);
  const [showResults, setShowResults] = useState(false);
  const retry = useAction();
  const { items, succeeded, failed, cancelled, pending } = job.totals;
  const done = succeeded + failed + cancelled;
  const outcome = outcomeOf(job);
  const counts: [string, number, boolean][] = [
    ['Succeeded', succeeded, false],
    ['Failed', failed, failed > 0],
    ['Cancelled', cancelled, false],
    ['Pending', pending, false],
  ];
  const percent = items === 0 ? 100 : Math.floor((done / items) * 100);
  const titleId = `job-${job.id}`;
  return (
    <article class={`card job ${job.state}`} aria-labelledby={titleId} data-job={job.id}>
      <header class="card-header">
        <h4 id={titleId}>
          <code>{job.id}</code>
        </h4>
        <span class={`badge ${job.state}`} data-testid="job-state">
          {stateLabels[job.state]}
        </span>
      </header>
      <div class="progress">
        <span>
          {job.processor}: <Num value={done} /> of <Num value={items} /> items ({percent}%)
        </span>
        <span
          role="progressbar"
          class={`bar ${outcome}`}
          aria-valuemin={0}
          aria-valuemax={items}
          aria-valuenow={done}
          aria-valuetext={`${percent}%: ${succeeded} succeeded, ${failed} failed, ${cancelled} cancelled`}
          aria-label={`Job ${job.id} progress`}
          data-outcome={outcome}
          data-testid="job-progress"
        >
          {/* One segment per outcome, so failed items show as failed however many succeeded. */}
          <span class="segment succeeded" data-segment="succeeded" style={{ width: share(succeeded, items) }} />
          <span class="segment failed" data-segment="failed" style={{ width: share(failed, items) }} />
          <span class="segment cancelled" data-segment="cancelled" style={{ width: share(cancelled, items) }} />
        </span>
      </div>
      <dl class="facts">
        {counts.map(([label, value, bad]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd class={bad ? 'bad' : undefined}>
              <Num value={value} />
            </dd>
          </div>
        ))}
        <div>
          <dt>Accepted</dt>
          <dd>
            <When iso={job.timings.acceptedAt} />
          </dd>
        </div>
        <div>
          <dt>Took</dt>
          <dd>{job.timings.durationMs === null ? <span class="muted">—</span> : formatDuration(job.timings.durationMs)}</dd>
        </div>
      </dl>
      <div class="actions">
        <button type="button" aria-expanded={showFailures} disabled={failed === 0} onClick={() => setShowFailures((v) => !v)}>
          {showFailures ? 'Hide failures' : `Failures (${failed})`}
        </button>
        <button type="button" aria-expanded={showResults} disabled={done === 0} onClick={() => setShowResults((v) => !v)}>
          {showResults ? 'Hide results' : 'Results'}
        </button>
        <ConfirmButton
          label="Retry failed…"
          ariaLabel={`Retry the failed items of job ${job.id}`}
          disabled={job.state !== 'completedWithFailures' || retry.busy}
          title={`Run the ${failed} failed items of job ${job.id} again?`}
          message={<p>They run as a new round with fresh attempts; the job is running again until they are done.</p>}
          confirmLabel="Retry failed items"
          onConfirm={() => void retry.run(() => tallyho().jobs.job(job.id).retryFailed()).then(onChanged)}
        />
      </div>
      <ProblemNotice error={retry.error} onDismiss={retry.clear} />
      {showFailures ? <Failures job={job} /> : null}
      {showResults ? <Results job={job} /> : null}
    </article>
  );
}

/** Jobs by processor, processors by name; within one, the listing's order. */
function byProcessor(jobs: readonly JobView[]): [string, JobView[]][] {
  const groups = new Map<string, JobView[]>();
  for (const job of jobs) groups.set(job.processor, [...(groups.get(job.processor) ?? []), job]);
  return [...groups].sort(([a], [b]) => a.localeCompare(b));
}

/** Per queue, "name: n" for the queues that hold any (all of them when none does). */
function perQueue(queues: readonly { readonly name: string; readonly count: number }[]): string {
  const busy = queues.filter((q) => q.count > 0);
  return (busy.length > 0 ? busy : queues).map((q) => `${q.name}: ${q.count}`).join(' · ');
}

function backlogFigures(data: JobFigures): Figure[] {
  return [
    {
      label: 'Envelopes waiting',
      value: <Num value={data.total.messages} />,
      detail: perQueue(data.queues.map((q) => ({ name: q.queue, count: q.messages }))),
    },
    {
      label: 'Poisoned envelopes',
      value: <Num value={data.total.poison} />,
      alarm: data.total.poison > 0,
      detail: perQueue(data.queues.map((q) => ({ name: q.poisonQueue, count: q.poison }))),
    },
    {
      label: 'Oldest envelope',
      value: formatDuration(data.total.oldestAgeSeconds * 1000),
      // The same line the job-backlog-age alert draws (docs/operations.md#alerts).
      alarm: data.total.oldestAgeSeconds > stuckSeconds,
      detail: 'waiting in a work queue, since first queued',
    },
    { label: 'In-app processors', value: data.processors.length, detail: data.processors.join(', ') },
  ];
}

/** An envelope waiting longer than this is what the backlog-age alerts fire on (infra/modules/alerts.bicep). */
const stuckSeconds = 900;

/**
 * Per declared processor: its backlog (the figure), what of it waits and what is leased, its oldest
 * waiting envelope, and its failed items over the jobs listed (unknown until the list is read).
 */
function declaredFigures(data: JobFigures, failures: ReadonlyMap<string, ProcessorFailures> | undefined): Figure[] {
  return data.declared.map((p) => {
    const failed = failures?.get(p.processor) ?? (failures === undefined ? undefined : { items: 0, jobs: 0 });
    return {
      label: p.processor,
      value: <Num value={p.backlog} />,
      alarm: p.oldestAgeSeconds > stuckSeconds,
      detail: [
        `${p.type}`,
        `waiting ${p.waitingAtLeast ? `${p.waiting}+` : p.waiting}`,
        `leased ${p.leased ?? '?'}`,
        `oldest ${formatDuration(p.oldestAgeSeconds * 1000)}`,
        failed === undefined ? 'failed ?' : `failed ${failed.items} in ${failed.jobs} ${failed.jobs === 1 ? 'job' : 'jobs'}`,
      ].join(' · '),
    };
  });
}

export function JobsView() {
  const list = usePagedPolling(loadJobs, 2000, 'jobs');
  const figures = usePolling((signal) => tallyho().jobs.figures({ abortSignal: signal }), 5000, 'jobs-figures');
  const items = list.data?.items ?? [];
  return (
    <Section
      id="jobs"
      title="Jobs"
      resource={list}
      count={items.length}
      empty="No jobs yet."
      listing={{ of: list.data, what: 'jobs', more: list.more }}
      intro={
        <>
          <Figures title="Work queue backlog" resource={figures} figures={backlogFigures} readAt={(d) => d.readAt} />
          {figures.data !== undefined && figures.data.declared.length > 0 ? (
            <Figures
              title="Declared processors"
              resource={figures}
              figures={(d) => declaredFigures(d, list.data?.failures)}
              readAt={(d) => d.readAt}
            />
          ) : null}
        </>
      }
    >
      {byProcessor(items).map(([processor, jobs]) => (
        <section key={processor} class="processor-group" data-processor={processor} aria-labelledby={`jobs-of-${processor}`}>
          <h3 id={`jobs-of-${processor}`}>{processor}</h3>
          <div class="cards">
            {jobs.map((job) => (
              <JobCard key={job.id} job={job} onChanged={list.refresh} />
            ))}
          </div>
        </section>
      ))}
    </Section>
  );
}
