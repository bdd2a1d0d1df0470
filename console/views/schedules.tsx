/** Schedules: what fires next, how the last runs went, and cancel / pause / resume / trigger now. */
import { tallyho } from '../api';
import { ConfirmButton, formatDuration, ProblemNotice, Section, TableWrap, When } from '../components';
import { Figures, type Figure } from '../figures';
import { useAction, usePagedPolling, usePolling } from '../hooks';
import { firstPages } from '../paging';
import type { ScheduleFigures, ScheduleRun, ScheduleView } from '../types';

/** The schedule-lateness alert's threshold (infra/modules/alerts.bicep): past it the figure is drawn as a warning. */
const latenessAlarmSeconds = 300;

function latenessFigures(data: ScheduleFigures): Figure[] {
  const worst = data.latestRuns[0];
  return [
    {
      label: 'Worst lateness',
      value: formatDuration(data.worstLatenessSeconds * 1000),
      alarm: data.worstLatenessSeconds > latenessAlarmSeconds,
      detail: worst === undefined ? 'no scheduled run yet' : `latest run of ${worst.id}`,
    },
    {
      label: 'Past due, not run',
      value: data.overdue.length,
      alarm: data.overdue.length > 0,
      detail: data.overdue.length === 0 ? 'none' : data.overdue.map((o) => o.id).join(', '),
    },
    { label: 'Schedules read', value: data.schedules, detail: data.truncated ? 'the first page of the index' : 'all' },
  ];
}

const finished = new Set(['cancelled', 'completed']);

function Runs({ runs }: { runs: ScheduleRun[] }) {
  if (runs.length === 0) return <span class="muted">none yet</span>;
  return (
    <ul class="runs">
      {runs
        .slice(-3)
        .reverse()
        .map((run) => (
          <li key={`${run.at}-${run.kind}`} class={`run ${run.outcome}`}>
            <span class={`badge ${run.outcome}`}>{run.outcome}</span> <When iso={run.at} />
            {run.count !== undefined && run.count > 1 ? ` ×${run.count}` : ''}
            {run.reason === undefined ? null : <span class="reason"> — {run.reason}</span>}
          </li>
        ))}
    </ul>
  );
}

function ScheduleRow({ schedule, onChanged }: { schedule: ScheduleView; onChanged: () => void }) {
  const action = useAction();
  const done = finished.has(schedule.state);
  const scheduledDelivery = schedule.delivery !== undefined;
  const perform = (operation: 'resume' | 'pause' | 'trigger' | 'cancel'): void => {
    void action
      .run(async () => {
        await tallyho().schedules[operation](schedule.id);
      })
      .then(onChanged);
  };
  return (
    <tr data-schedule={schedule.id}>
      <th scope="row">
        {schedule.id}
        <div class="muted small">{typeof schedule.target.type === 'string' ? schedule.target.type : ''}</div>
      </th>
      <td>
        {schedule.cron === undefined ? (
          <>
            once,{' '}
            <span data-testid="schedule-at">
              <When iso={schedule.at} dated />
            </span>
          </>
        ) : (
          <>
            <code>{schedule.cron}</code> <span class="muted small">{schedule.timeZone ?? 'UTC'}</span>
          </>
        )}
      </td>
      <td>
        <span class={`badge ${schedule.state}`} data-testid="schedule-state">
          {schedule.state}
        </span>
      </td>
      <td>
        <span data-testid="schedule-next">
          <When iso={schedule.nextFireAt} empty={done ? '—' : 'not scheduled'} dated />
        </span>
      </td>
      <td>
        <Runs runs={schedule.runs} />
      </td>
      <td class="row-actions">
        {schedule.state === 'paused' ? (
          <button
            type="button"
            disabled={done || action.busy}
            onClick={() => perform('resume')}
            aria-label={`Resume schedule ${schedule.id}`}
          >
            Resume
          </button>
        ) : (
          <button
            type="button"
            disabled={done || scheduledDelivery || action.busy}
            onClick={() => perform('pause')}
            aria-label={`Pause schedule ${schedule.id}`}
          >
            Pause
          </button>
        )}
        <button
          type="button"
          disabled={done || scheduledDelivery || action.busy}
          onClick={() => perform('trigger')}
          aria-label={`Trigger schedule ${schedule.id} now`}
        >
          Trigger now
        </button>
        <ConfirmButton
          label="Cancel…"
          ariaLabel={`Cancel schedule ${schedule.id}`}
          danger
          disabled={done || action.busy}
          title={`Cancel schedule ${schedule.id}?`}
          message={<p>It will never fire again; a run in progress finishes. This cannot be undone.</p>}
          confirmLabel="Cancel schedule"
          onConfirm={() => perform('cancel')}
        />
        <ProblemNotice error={action.error} onDismiss={action.clear} />
      </td>
    </tr>
  );
}

export function SchedulesView() {
  const list = usePagedPolling((pages, signal) => firstPages(tallyho().schedules.list({ signal }), pages), 5000, 'schedules');
  const figures = usePolling((signal) => tallyho().schedules.figures({ abortSignal: signal }), 5000, 'schedules-figures');
  const items = list.data?.items ?? [];
  return (
    <Section
      id="schedules"
      title="Schedules"
      resource={list}
      count={items.length}
      empty="No schedules yet."
      listing={{ of: list.data, what: 'schedules', more: list.more }}
      intro={<Figures title="Lateness" resource={figures} figures={latenessFigures} readAt={(d) => d.readAt} />}
    >
      <TableWrap label="Schedules">
        <table>
          <thead>
            <tr>
              <th scope="col">Schedule</th>
              <th scope="col">When</th>
              <th scope="col">State</th>
              <th scope="col">Next fire</th>
              <th scope="col">Last runs</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {items.map((s) => (
              <ScheduleRow key={s.id} schedule={s} onChanged={list.refresh} />
            ))}
          </tbody>
        </table>
      </TableWrap>
    </Section>
  );
}
