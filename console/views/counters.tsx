/** Counters: value, rollup watermark and hits not folded yet. */
import { tallyho } from '../api';
import { formatDuration, Num, Section, TableWrap, When } from '../components';
import { Figures, type Figure } from '../figures';
import { usePagedPolling, usePolling } from '../hooks';
import { firstPages } from '../paging';
import type { CounterFigures, CounterValue, CounterView, Listing } from '../types';

/** The counter-rollup-lag alert's threshold (infra/modules/alerts.bicep): past it the figure is drawn as a warning. */
const lagAlarmSeconds = 900;

function rollupFigures(data: CounterFigures): Figure[] {
  const more = data.truncated ? ' (at least)' : '';
  return [
    {
      label: 'Rollup lag',
      value: formatDuration(data.rollupLagSeconds * 1000),
      alarm: data.rollupLagSeconds > lagAlarmSeconds,
      detail: data.oldestUnfoldedAt === null ? 'every hit folded' : 'oldest minute with hits not folded',
    },
    {
      label: 'Partitions not folded',
      value: <Num value={data.partitionsWaiting} />,
      detail: `${data.countersWaiting.length > 0 ? data.countersWaiting.join(', ') : 'no counter'}${more}`,
    },
  ];
}

interface Row {
  readonly counter: CounterView;
  readonly value: CounterValue | undefined;
  readonly error: string | undefined;
}

/** Reads at most this many counters' values per refresh (each read is a storage query). */
const maxValueReads = 50;

async function loadCounters(pages: number, signal: AbortSignal): Promise<{ listing: Listing<CounterView>; rows: Row[] }> {
  const listing = await firstPages(tallyho().counters.list({ signal }), pages);
  const rows = await Promise.all(
    listing.items.slice(0, maxValueReads).map(async (counter): Promise<Row> => {
      try {
        return { counter, value: await tallyho().counters.get(counter.name, { abortSignal: signal }), error: undefined };
      } catch (err) {
        return { counter, value: undefined, error: err instanceof Error ? err.message : String(err) };
      }
    }),
  );
  return { listing, rows };
}

export function CountersView() {
  const data = usePagedPolling(loadCounters, 5000, 'counters');
  const figures = usePolling((signal) => tallyho().counters.figures({ abortSignal: signal }), 5000, 'counters-figures');
  const rows = data.data?.rows ?? [];
  return (
    <Section
      id="counters"
      title="Counters"
      resource={data}
      count={rows.length}
      empty="No counters yet."
      listing={{ of: data.data?.listing, what: 'counters', more: data.more }}
      intro={<Figures title="Rollup" resource={figures} figures={rollupFigures} readAt={(d) => d.readAt} />}
    >
      <TableWrap label="Counters">
        <table>
          <thead>
            <tr>
              <th scope="col">Counter</th>
              <th scope="col">Mode</th>
              <th scope="col" class="num">
                Value
              </th>
              <th scope="col">Watermark</th>
              <th scope="col" class="num">
                Pending hits
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map(({ counter, value, error }) => (
              <tr key={counter.name} data-counter={counter.name}>
                <th scope="row">{counter.name}</th>
                <td>
                  {counter.mode} <span class="muted small">× {counter.partitions}</span>
                </td>
                <td class="num" data-testid="counter-value">
                  {error === undefined ? <Num value={value?.value} /> : <span class="bad">{error}</span>}
                </td>
                <td data-testid="counter-watermark">
                  <When iso={value?.watermark} empty="no rollup yet" />
                </td>
                <td class="num" data-testid="counter-pending">
                  <Num value={value?.pendingHits} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
    </Section>
  );
}
