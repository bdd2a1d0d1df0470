/**
 * Streams: each event type's writer — buffer depth against its bound, flush lag, last flush and
 * error. The API lists every type written to or remapped; the app's own types are added by name (kept in this browser).
 */
import { useState } from 'preact/hooks';

import { tallyho } from '../api';
import { formatDuration, Num, ProblemNotice, Section, TableWrap, When } from '../components';
import { useAction, usePagedPolling } from '../hooks';
import { firstPages } from '../paging';
import type { StreamView } from '../types';

const watchItem = 'tallyho.watchedStreams';
const typePattern = /^[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,61}[A-Za-z0-9_-])?$/;

function readWatched(): string[] {
  try {
    const parsed = JSON.parse(localStorage.getItem(watchItem) ?? '[]') as unknown;
    return Array.isArray(parsed) ? parsed.filter((t): t is string => typeof t === 'string' && typePattern.test(t)) : [];
  } catch {
    return [];
  }
}

const describeAtOnce = 3;

interface Row {
  readonly type: string;
  readonly view: StreamView | undefined;
  readonly error: string | undefined;
}

function StreamRow({ row, watched, onUnwatch, onChanged }: { row: Row; watched: boolean; onUnwatch: () => void; onChanged: () => void }) {
  const flush = useAction();
  const w = row.view?.writer;
  return (
    <tr data-stream={row.type}>
      <th scope="row">{row.type}</th>
      <td>
        {row.view === undefined ? (
          <span class="bad">{row.error}</span>
        ) : (
          <>
            {row.view.route.partition}/{row.view.route.resource}
            <span class="muted small"> v{row.view.route.version}</span>
          </>
        )}
      </td>
      <td class="num" data-testid="stream-buffered">
        {w === undefined ? null : (
          <label class="meter">
            <Num value={w.bufferDepth} /> / <Num value={w.maxBuffered} />
            <meter min={0} max={w.maxBuffered} high={w.maxBuffered * 0.8} value={w.bufferDepth} aria-label={`Buffer of ${row.type}`} />
          </label>
        )}
      </td>
      <td class="num" data-testid="stream-flushed-through" title="Every event with a lower index is in the log">
        {w === undefined ? null : (
          <>
            <Num value={w.flushedThrough} />{' '}
            <span class="muted small">
              of <Num value={w.accepted} />
            </span>
          </>
        )}
      </td>
      <td class="num" data-testid="stream-flush-lag">
        {w === undefined ? null : w.flushLagMs === 0 ? <span class="muted">none</span> : formatDuration(w.flushLagMs)}
      </td>
      <td data-testid="stream-last-flush">
        {w === undefined || w.lastFlush === null ? (
          <span class="muted">never</span>
        ) : (
          <>
            <When iso={w.lastFlush.at} /> <span class="muted small">({w.lastFlush.events} events)</span>
          </>
        )}
        {w === undefined || w.lastError === null ? null : (
          <div class="bad small">
            Error <When iso={w.lastError.at} />: {w.lastError.message}
          </div>
        )}
      </td>
      <td class="row-actions">
        <button
          type="button"
          disabled={flush.busy || w === undefined || w.bufferDepth === 0}
          aria-label={`Flush ${row.type} now`}
          onClick={() => void flush.run(() => tallyho().stream(row.type).flush()).then(onChanged)}
        >
          Flush now
        </button>
        {watched ? (
          <button type="button" class="link" onClick={onUnwatch} aria-label={`Stop watching ${row.type}`}>
            Remove
          </button>
        ) : null}
        <ProblemNotice error={flush.error} onDismiss={flush.clear} />
      </td>
    </tr>
  );
}

export function StreamsView() {
  const [watched, setWatched] = useState(readWatched);
  const [draft, setDraft] = useState('');
  const save = (next: string[]): void => {
    localStorage.setItem(watchItem, JSON.stringify(next));
    setWatched(next);
  };
  const data = usePagedPolling(
    async (pages, signal) => {
      const listing = await firstPages(tallyho().streams.list({ signal }), pages);
      const types = [...new Set([...listing.items.map((r) => r.type), ...watched])].sort();
      const describe = async (type: string): Promise<Row> => {
        try {
          return { type, view: await tallyho().stream(type).describe({ abortSignal: signal }), error: undefined };
        } catch (err) {
          return { type, view: undefined, error: err instanceof Error ? err.message : String(err) };
        }
      };
      // A few at a time: every written type is listed, and a browser has six connections per origin,
      // which the page's other calls need too.
      const rows: Row[] = [];
      for (let i = 0; i < types.length; i += describeAtOnce)
        rows.push(...(await Promise.all(types.slice(i, i + describeAtOnce).map(describe))));
      return { listing, rows };
    },
    5000,
    `streams:${watched.join(',')}`,
  );
  const rows = data.data?.rows ?? [];
  const draftValid = typePattern.test(draft.trim());
  return (
    <Section
      id="streams"
      title="Streams"
      resource={data}
      count={rows.length}
      empty="No event types yet: they appear once something is appended to one (or add one above by name)."
      intro={
        <form
          class="inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            const type = draft.trim();
            if (!typePattern.test(type)) return;
            if (!watched.includes(type)) save([...watched, type]);
            setDraft('');
          }}
        >
          <label for="watch-type">Event type</label>
          <input id="watch-type" value={draft} onInput={(e) => setDraft(e.currentTarget.value)} placeholder="orders" autocomplete="off" />
          <button type="submit" disabled={!draftValid}>
            Watch
          </button>
        </form>
      }
      listing={{ of: data.data?.listing, what: 'event types', more: data.more }}
    >
      <TableWrap label="Streams">
        <table>
          <thead>
            <tr>
              <th scope="col">Event type</th>
              <th scope="col">Partition / resource</th>
              <th scope="col" class="num">
                Buffered
              </th>
              <th scope="col" class="num">
                Flushed through
              </th>
              <th scope="col" class="num">
                Flush lag
              </th>
              <th scope="col">Last flush</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <StreamRow
                key={row.type}
                row={row}
                watched={watched.includes(row.type)}
                onUnwatch={() => save(watched.filter((t) => t !== row.type))}
                onChanged={data.refresh}
              />
            ))}
          </tbody>
        </table>
      </TableWrap>
    </Section>
  );
}
