/** Jobs: progress bars, failures with their reasons (poisoned envelopes included), retry of failed items. */
import { useState } from 'preact/hooks';

import { tallyho } from '../api';
import { ConfirmButton, formatDuration, Num, ProblemNotice, Section, When } from '../components';
import { useAction, usePolling } from '../hooks';
import type { JobFailure, JobView } from '../types';

const stateLabels: Record<JobView['state'], string> = {
  accepted: 'accepted',
  running: 'running',
  cancelling: 'cancelling',
  completed: 'completed',
  completedWithFailures: 'completed with failures',
  cancelled: 'cancelled',
};

/** Shown per job; past it the list says so. */
const failuresShown = 50;

/** The first failures of a job, and whether there are more than shown. */
async function firstFailures(id: string, signal: AbortSignal): Promise<{ failures: JobFailure[]; more: boolean }> {
  const failures: JobFailure[] = [];
  for await (const failure of tallyho().jobs.job(id).failures({ pageSize: failuresShown, signal })) {
    if (failures.length === failuresShown) return { failures, more: true };
    failures.push(failure);
  }
  return { failures, more: false };
}

function Failures({ job }: { job: JobView }) {
  const failures = usePolling(
    (signal) => firstFailures(job.id, signal),
    job.state === 'running' ? 3000 : 30000,
    `${job.id}:${job.totals.failed}`,
  );
  const rows = failures.data?.failures ?? [];
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
  const retry = useAction();
  const { items, succeeded, failed, pending } = job.totals;
  const done = succeeded + failed;
  const percent = items === 0 ? 100 : Math.floor((done / items) * 100);
  const titleId = `job-${job.id}`;
  return (
    <article class={`card job ${job.state}`} aria-labelledby={titleId} data-job={job.id}>
      <header class="card-header">
        <h3 id={titleId}>
          <code>{job.id}</code>
        </h3>
        <span class={`badge ${job.state}`} data-testid="job-state">
          {stateLabels[job.state]}
        </span>
      </header>
      <label class="progress">
        <span>
          {job.processor}: <Num value={done} /> of <Num value={items} /> items ({percent}%)
        </span>
        <progress max={items} value={done} aria-label={`Job ${job.id} progress`} data-testid="job-progress">
          {percent}%
        </progress>
      </label>
      <dl class="facts">
        <div>
          <dt>Succeeded</dt>
          <dd>
            <Num value={succeeded} />
          </dd>
        </div>
        <div>
          <dt>Failed</dt>
          <dd class={failed > 0 ? 'bad' : undefined}>
            <Num value={failed} />
          </dd>
        </div>
        <div>
          <dt>Pending</dt>
          <dd>
            <Num value={pending} />
          </dd>
        </div>
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
    </article>
  );
}

export function JobsView() {
  const list = usePolling((signal) => tallyho().jobs.list({ limit: 20, signal }), 2000, 'jobs');
  const items = list.data?.items ?? [];
  return (
    <Section id="jobs" title="Jobs" resource={list} count={items.length} empty="No jobs yet." listing={{ of: list.data, what: 'jobs' }}>
      <div class="cards">
        {items.map((job) => (
          <JobCard key={job.id} job={job} onChanged={list.refresh} />
        ))}
      </div>
    </Section>
  );
}
