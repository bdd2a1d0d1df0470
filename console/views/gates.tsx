/**
 * Gates: state and waiters, kept live over the gate's server-sent events, and a release button that
 * asks first. The list itself refreshes more slowly; each card follows its own event stream.
 */
import { useEffect, useState } from 'preact/hooks';

import { tallyho } from '../api';
import { ConfirmButton, Num, ProblemNotice, Section, When } from '../components';
import { useAction, usePagedPolling } from '../hooks';
import { firstPages } from '../paging';
import type { GateView } from '../types';

type Live = 'connecting' | 'live' | 'retrying' | 'listed';

/**
 * Browsers open at most six HTTP/1.1 connections to one origin, and an event stream holds one for as
 * long as it is open. With a stream per card, a console showing six gates had no connection left for
 * its own calls: a confirmed release waited, unsent, until a stream ended. So only this many cards
 * follow a stream — the closed gates first in list order, the ones a release is awaited for — and
 * the others show the list's state, refreshed with the list.
 */
const maxStreams = 3;

/** The gates whose cards follow an event stream (see maxStreams). */
function streamed(items: readonly GateView[]): ReadonlySet<string> {
  return new Set(
    items
      .filter((g) => g.state === 'closed')
      .slice(0, maxStreams)
      .map((g) => g.name),
  );
}

/**
 * The gate as its event stream last told it, while the card has a stream; else as the list read it.
 * The client's watch() reads first, then follows the stream and reconnects with back-off itself; the
 * loop here only restarts it after an error it could not get past (shown on the card), such as a key
 * that stopped working.
 */
function useGateEvents(initial: GateView, stream: boolean): { gate: GateView; live: Live; error: Error | undefined } {
  const [gate, setGate] = useState(initial);
  const [live, setLive] = useState<Live>('connecting');
  const [error, setError] = useState<Error | undefined>(undefined);
  useEffect(() => {
    if (!stream) return undefined;
    const controller = new AbortController();
    let failures = 0;
    setLive('connecting');
    const loop = async (): Promise<void> => {
      while (!controller.signal.aborted) {
        try {
          for await (const next of tallyho().gate(initial.name).watch({ abortSignal: controller.signal })) {
            setGate(next);
            setLive('live');
            setError(undefined);
            failures = 0;
          }
        } catch (err) {
          if (controller.signal.aborted) return;
          failures += 1;
          setError(err instanceof Error ? err : new Error(String(err)));
        }
        if (controller.signal.aborted) return;
        setLive('retrying');
        await new Promise((resolve) => window.setTimeout(resolve, Math.min(30_000, 500 * 2 ** failures)));
      }
    };
    void loop();
    return () => controller.abort();
  }, [initial.name, stream]);
  if (!stream) return { gate: initial, live: 'listed', error: undefined };
  return { gate, live, error };
}

function GateCard({ initial, stream }: { initial: GateView; stream: boolean }) {
  const { gate, live, error } = useGateEvents(initial, stream);
  const release = useAction();
  const released = gate.state === 'released';
  const titleId = `gate-${gate.name}`;
  return (
    <article class={`card gate ${gate.state}`} aria-labelledby={titleId} data-gate={gate.name}>
      <header class="card-header">
        <h3 id={titleId}>{gate.name}</h3>
        <span class={`badge ${gate.state}`} data-testid="gate-state">
          {gate.state}
        </span>
        <span
          class={`live ${live}`}
          title={
            live === 'listed'
              ? 'Refreshed with the list (live updates follow the first closed gates)'
              : 'Live updates over server-sent events'
          }
        >
          {live === 'live' ? 'live' : live === 'connecting' ? 'connecting…' : live === 'listed' ? 'with the list' : 'reconnecting…'}
        </span>
      </header>
      <dl class="facts">
        <div>
          <dt>Generation</dt>
          <dd>
            <Num value={gate.generation} />
          </dd>
        </div>
        <div>
          <dt>Waiting</dt>
          <dd data-testid="gate-waiting">
            <Num value={gate.waiters.waiting} />
          </dd>
        </div>
        <div>
          <dt>Registered</dt>
          <dd>
            <Num value={gate.waiters.registered} />
          </dd>
        </div>
        <div>
          <dt>Proceeded</dt>
          <dd>
            <Num value={gate.waiters.proceeded} />
          </dd>
        </div>
        <div>
          <dt>Late joiners</dt>
          <dd>
            <Num value={gate.waiters.late} />
          </dd>
        </div>
        {released ? (
          <div>
            <dt>Released</dt>
            <dd>
              <When iso={gate.releasedAt} /> by {gate.releasedBy ?? 'unknown'}
              {gate.releaseHow === 'schedule' ? ' (schedule)' : ''}
            </dd>
          </div>
        ) : (
          <div>
            <dt>Scheduled release</dt>
            <dd>
              <When iso={gate.releaseAt} empty="none" />
            </dd>
          </div>
        )}
      </dl>
      {gate.releaseNote === null ? null : <p class="note">“{gate.releaseNote}”</p>}
      <div class="actions">
        <ConfirmButton
          label={release.busy ? 'Releasing…' : 'Release…'}
          ariaLabel={`Release gate ${gate.name}`}
          danger
          disabled={released || release.busy}
          title={`Release gate ${gate.name}?`}
          message={
            <p>
              {gate.waiters.waiting === 1 ? '1 run is' : `${gate.waiters.waiting} runs are`} waiting. Releasing lets every waiting run
              proceed at once, and every run that joins later too. This cannot be undone (a reset starts a new generation).
            </p>
          }
          confirmLabel="Release"
          onConfirm={() => void release.run(() => tallyho().gate(gate.name).release({ note: 'released from the console' }))}
        />
      </div>
      <ProblemNotice error={release.error} onDismiss={release.clear} />
      {error !== undefined && live !== 'live' ? <p class="hint bad">Live updates interrupted: {error.message}</p> : null}
    </article>
  );
}

export function GatesView() {
  const list = usePagedPolling((pages, signal) => firstPages(tallyho().gates.list({ signal }), pages), 15000, 'gates');
  const items = list.data?.items ?? [];
  const live = streamed(items);
  return (
    <Section
      id="gates"
      title="Gates"
      resource={list}
      count={items.length}
      empty="No gates yet."
      listing={{ of: list.data, what: 'gates', more: list.more }}
    >
      <div class="cards">
        {items.map((gate) => (
          <GateCard key={gate.name} initial={gate} stream={live.has(gate.name)} />
        ))}
      </div>
    </Section>
  );
}
