/** Long-poll and SSE on top of the watch hub, on a manual clock: read first, then wait, bounded. */
import { ManualClock } from '../../../shared/clock';
import type { GateSnapshot } from '../../../shared/gates/operations';
import { gateEventStream, isReleasedFor, waitForRelease, type WaitingDeps } from '../../../shared/gates/waiting';
import { GateWatchHub } from '../../../shared/gates/watchHub';
import { MemoryLogger } from '../../../shared/log';
import { gate, settings } from './fixtures';

/** `null`: the gate does not exist. */
function setup(initial: GateSnapshot | null = gate('closed')) {
  const clock = new ManualClock();
  let stored = initial ?? undefined;
  const hub = new GateWatchHub(() => Promise.resolve(stored), { intervalMs: 1000, clock, logger: new MemoryLogger() });
  const logger = new MemoryLogger();
  const deps: WaitingDeps = { hub, settings, clock, random: () => 0.5, logger };
  return { clock, hub, deps, logger, set: (g: GateSnapshot) => (stored = g) };
}

const flush = async (): Promise<void> => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

async function readAll(stream: ReadableStream<Uint8Array>, chunks: string[]): Promise<void> {
  const decoder = new TextDecoder();
  for await (const chunk of stream) chunks.push(decoder.decode(chunk));
}

describe('isReleasedFor', () => {
  test('without a generation: released; with one: that generation released, or the gate moved past it', () => {
    expect(isReleasedFor(gate('released'), undefined)).toBe(true);
    expect(isReleasedFor(gate('closed'), undefined)).toBe(false);
    expect(isReleasedFor(gate('released', 1), 2)).toBe(false);
    expect(isReleasedFor(gate('closed', 3), 2)).toBe(true);
    expect(isReleasedFor(gate('released', 2), 2)).toBe(true);
  });
});

describe('waitForRelease', () => {
  test('answers at once for a released gate (read first)', async () => {
    const { deps } = setup(gate('released'));
    await expect(waitForRelease(deps, 'g', 30, undefined)).resolves.toMatchObject({ released: true, timedOut: false });
  });

  test('answers when the release is published, long before the timeout', async () => {
    const { deps, hub } = setup();
    const waiting = waitForRelease(deps, 'g', 30, undefined);
    await flush();
    hub.publish(gate('released'));
    await expect(waiting).resolves.toMatchObject({ released: true, timedOut: false, gate: { state: 'released' } });
    expect(hub.stats().listeners).toBe(0);
  });

  test('answers when a watcher read sees the release made elsewhere', async () => {
    const { deps, clock, set } = setup();
    const waiting = waitForRelease(deps, 'g', 30, undefined);
    await flush();
    set(gate('released'));
    await clock.advance(1000);
    await expect(waiting).resolves.toMatchObject({ released: true });
  });

  test('times out with the current state', async () => {
    const { deps, clock, hub } = setup();
    const waiting = waitForRelease(deps, 'g', 5, undefined);
    await flush();
    await clock.advance(5000);
    await expect(waiting).resolves.toMatchObject({ released: false, timedOut: true, gate: { state: 'closed' } });
    expect(hub.stats()).toMatchObject({ gates: 0, listeners: 0 });
  });

  test('a missing gate is a 404', async () => {
    const { deps } = setup(null);
    await expect(waitForRelease(deps, 'g', 5, undefined)).rejects.toMatchObject({ code: 'NotFound' });
  });

  test('answers at once when the hub closes (shutdown)', async () => {
    const { deps, hub } = setup();
    const waiting = waitForRelease(deps, 'g', 60, undefined);
    await flush();
    hub.close();
    await expect(waiting).resolves.toMatchObject({ released: false, timedOut: true });
  });

  test('a client that hangs up ends the wait at once, lets go of the gate and is logged', async () => {
    const { deps, hub, logger } = setup();
    const client = new AbortController();
    const waiting = waitForRelease(deps, 'g', 60, undefined, client.signal);
    await flush();
    expect(hub.stats().listeners).toBe(1);
    client.abort();
    await expect(waiting).resolves.toMatchObject({ released: false, timedOut: true });
    expect(hub.stats()).toMatchObject({ gates: 0, listeners: 0 });
    expect(logger.entries).toContainEqual(
      expect.objectContaining({ event: 'gates.watch.clientGone', fields: { gate: 'g', kind: 'wait', listeners: 0 } }),
    );
  });
});

describe('gateEventStream', () => {
  test('retry hint, the current state, heartbeats, the release, then the end', async () => {
    const { deps, clock, hub } = setup();
    const chunks: string[] = [];
    const reading = readAll(await gateEventStream(deps, 'g'), chunks);
    await flush();
    expect(chunks[0]).toBe('retry: 3000\n\n');
    expect(chunks[1]).toMatch(/^event: state\nid: "g1\.c\.[^"]+"\ndata: \{"name":"g","state":"closed"/);
    await clock.advance(15_000);
    expect(chunks).toContain(': heartbeat\n\n');
    hub.publish(gate('released'));
    await reading;
    expect(chunks.slice(-2)).toEqual([expect.stringMatching(/^event: released\nid: "g1\.r\./), ': stream ends; reconnect to resume\n\n']);
    expect(hub.stats()).toMatchObject({ listeners: 0 });
  });

  test('a stream that sees no release ends after sseMaxSeconds', async () => {
    const { deps, clock, hub } = setup();
    const chunks: string[] = [];
    const reading = readAll(await gateEventStream(deps, 'g'), chunks);
    await flush();
    await clock.advance(59_000);
    expect(chunks.filter((c) => c === ': heartbeat\n\n')).toHaveLength(3);
    await clock.advance(1000);
    await reading;
    expect(chunks.at(-1)).toBe(': stream ends; reconnect to resume\n\n');
    expect(hub.stats()).toMatchObject({ listeners: 0 });
  });

  test('a released gate is the first event; a missing gate is a 404 before any stream', async () => {
    const released = setup(gate('released'));
    const chunks: string[] = [];
    const reading = readAll(await gateEventStream(released.deps, 'g'), chunks);
    await flush();
    expect(chunks[1]).toMatch(/^event: released\n/);
    released.hub.close();
    await reading;
    await expect(gateEventStream(setup(null).deps, 'g')).rejects.toMatchObject({ code: 'NotFound' });
  });

  test('a client that hangs up ends the stream at once (no closing comment), lets go of the gate and is logged', async () => {
    const { deps, hub, logger } = setup();
    const client = new AbortController();
    const chunks: string[] = [];
    const reading = readAll(await gateEventStream(deps, 'g', client.signal), chunks);
    await flush();
    expect(hub.stats().listeners).toBe(1);
    client.abort();
    await reading;
    expect(chunks).not.toContain(': stream ends; reconnect to resume\n\n');
    expect(hub.stats()).toMatchObject({ gates: 0, listeners: 0 });
    expect(logger.entries).toContainEqual(
      expect.objectContaining({ event: 'gates.watch.clientGone', fields: { gate: 'g', kind: 'events', listeners: 0 } }),
    );
  });

  test('cancelling the stream unsubscribes it', async () => {
    const { deps, hub } = setup();
    const stream = await gateEventStream(deps, 'g');
    expect(hub.stats().listeners).toBe(1);
    await stream.cancel();
    expect(hub.stats().listeners).toBe(0);
  });
});
