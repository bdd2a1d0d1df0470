/**
 * Long-poll and server-sent events for workers outside Durable. Both subscribe to the process's
 * watch hub before they read, then read the state first — so a release between the read and the wait
 * cannot be missed — and both are bounded: a long poll by `timeout` (at most
 * TALLYHO_GATES_WAIT_MAX_SECONDS, below the 230 s at which Azure's front end drops an idle request),
 * an event stream by TALLYHO_GATES_SSE_MAX_SECONDS, after which the client reconnects (the `retry:`
 * hint) and is sent the full state again.
 */
import type { Clock } from '../clock';
import type { Logger } from '../log';
import type { GateSettings } from './settings';
import { AppError } from '../errors';
import type { GateSnapshot } from './operations';
import { viewOf } from './schemas';
import type { GateWatchHub, Observed } from './watchHub';

/** Reconnect hint for event-stream clients, with jitter so a fleet does not reconnect in step. */
const sseRetryBaseMs = 2000;

export interface WaitingDeps {
  readonly hub: GateWatchHub;
  readonly settings: GateSettings;
  readonly clock: Clock;
  readonly random: () => number;
  readonly logger: Logger;
}

/** Logged when a client hangs up on a long poll or stream: what it held is let go at once. */
function clientLeft(deps: WaitingDeps, name: string, kind: 'wait' | 'events'): void {
  deps.logger.log('info', 'gates.watch.clientGone', { gate: name, kind, listeners: deps.hub.stats().listeners });
}

/** Released, or (when the client names a generation) moved past it. */
export function isReleasedFor(gate: GateSnapshot, generation: number | undefined): boolean {
  if (generation === undefined || gate.generation === generation) return gate.state === 'released';
  return gate.generation > generation;
}

function existing(observed: Observed, name: string): GateSnapshot {
  if (observed.gate === undefined) throw new AppError('NotFound', `No gate named "${name}"`);
  return observed.gate;
}

export interface WaitOutcome {
  readonly gate: GateSnapshot;
  readonly etag: string | undefined;
  readonly released: boolean;
  readonly timedOut: boolean;
}

export async function waitForRelease(
  deps: WaitingDeps,
  name: string,
  timeoutSeconds: number,
  generation: number | undefined,
  clientGone: AbortSignal = new AbortController().signal,
): Promise<WaitOutcome> {
  const stop = new AbortController();
  let resolveSeen: (o: Observed) => void = () => undefined;
  const seen = new Promise<Observed>((resolve) => (resolveSeen = resolve));
  const unsubscribe = deps.hub.subscribe(name, (o) => {
    if (o.gate === undefined || isReleasedFor(o.gate, generation)) resolveSeen(o);
  });
  try {
    const first = await deps.hub.current(name);
    const gate = existing(first, name);
    if (isReleasedFor(gate, generation)) return { gate, etag: first.etag, released: true, timedOut: false };
    // A client that hung up ends the wait like a timeout: its answer goes nowhere, and the hub lets go of it now.
    const timeout = deps.clock.sleep(timeoutSeconds * 1000, AbortSignal.any([stop.signal, deps.hub.closing, clientGone])).then(
      () => undefined,
      () => undefined,
    );
    const outcome = await Promise.race([seen, timeout]);
    if (outcome !== undefined) {
      const released = existing(outcome, name);
      return { gate: released, etag: outcome.etag, released: true, timedOut: false };
    }
    const last = await deps.hub.current(name);
    const latest = existing(last, name);
    return { gate: latest, etag: last.etag, released: isReleasedFor(latest, generation), timedOut: true };
  } finally {
    stop.abort();
    unsubscribe();
    if (clientGone.aborted) clientLeft(deps, name, 'wait');
  }
}

function sseEvent(observed: Observed): string {
  if (observed.gate === undefined) return `event: deleted\ndata: {}\n\n`;
  const name = observed.gate.state === 'released' ? 'released' : 'state';
  return `event: ${name}\nid: ${observed.etag ?? ''}\ndata: ${JSON.stringify(viewOf(observed.gate))}\n\n`;
}

/**
 * An event stream for one gate: a `retry:` hint, the current state (`state`, or `released` when it is
 * released), then every change (`released` for a release, `state` otherwise), `: heartbeat` comments in
 * between. It ends after TALLYHO_GATES_SSE_MAX_SECONDS, when the client hangs up (`clientGone`), and
 * right after a release it delivers (a worker that got its release has no more use for it). A client
 * that follows the gate further reconnects and is sent the released state first. Resolves once the
 * first state is read, so a missing gate is an ordinary 404 rather than a broken stream.
 */
export async function gateEventStream(
  deps: WaitingDeps,
  name: string,
  clientGone: AbortSignal = new AbortController().signal,
): Promise<ReadableStream<Uint8Array>> {
  const encoder = new TextEncoder();
  let push: (observed: Observed) => void = () => undefined;
  const unsubscribe = deps.hub.subscribe(name, (o) => push(o));
  let first: Observed;
  try {
    first = await deps.hub.current(name);
    existing(first, name);
  } catch (err) {
    unsubscribe();
    throw err;
  }
  const stop = new AbortController();
  const ending = AbortSignal.any([stop.signal, deps.hub.closing, clientGone]);
  const retryMs = Math.round(sseRetryBaseMs * (1 + deps.random()));
  const { clock, settings } = deps;
  let closed = false;
  const finish = (): void => {
    if (closed) return;
    closed = true;
    stop.abort();
    unsubscribe();
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const write = (chunk: string): void => {
        if (!closed) controller.enqueue(encoder.encode(chunk));
      };
      write(`retry: ${retryMs}\n\n`);
      write(sseEvent(first));
      // Changes seen between the subscription and the first read are older than or equal to it, so
      // they were dropped; from here every change is sent.
      push = (o) => {
        write(sseEvent(o));
        if (o.gate?.state === 'released') stop.abort();
      };
      void (async () => {
        const end = clock.now() + settings.sseMaxSeconds * 1000;
        try {
          while (clock.now() < end) {
            await clock.sleep(Math.min(settings.heartbeatSeconds * 1000, end - clock.now()), ending);
            if (clock.now() < end) write(': heartbeat\n\n');
          }
        } catch {
          // Aborted: a release was sent, the client went away (cancel), or the host is stopping.
        }
        if (closed) return;
        if (clientGone.aborted) {
          finish();
          clientLeft(deps, name, 'events');
          controller.close();
          return;
        }
        write(': stream ends; reconnect to resume\n\n');
        finish();
        controller.close();
      })();
    },
    cancel() {
      finish();
    },
  });
}
