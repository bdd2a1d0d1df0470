/** Counters: value, rollup watermark and hits not folded yet. */
import { tallyho } from '../api';
import { Num, Section, TableWrap, When } from '../components';
import { usePolling } from '../hooks';
import type { CounterValue, CounterView, Listing } from '../types';

interface Row {
  readonly counter: CounterView;
  readonly value: CounterValue | undefined;
  readonly error: string | undefined;
}

/** Reads at most this many counters' values per refresh (each read is a storage query). */
const maxValueReads = 50;

async function loadCounters(signal: AbortSignal): Promise<{ listing: Listing<CounterView>; rows: Row[] }> {
  const listing = await tallyho().counters.list({ signal });
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
  const data = usePolling(loadCounters, 5000, 'counters');
  const rows = data.data?.rows ?? [];
  return (
    <Section
      id="counters"
      title="Counters"
      resource={data}
      count={rows.length}
      empty="No counters yet."
      listing={{ of: data.data?.listing, what: 'counters' }}
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
