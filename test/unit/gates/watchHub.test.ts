/** The per-process watcher: one read per gate per interval however many clients wait, local publishes delivered at once. */
import { ManualClock } from '../../../shared/clock';
import type { GateSnapshot } from '../../../shared/gates/operations';
import { GateWatchHub, type Observed } from '../../../shared/gates/watchHub';
import { MemoryLogger } from '../../../shared/log';
import { gate } from './fixtures';

function setup() {
  const clock = new ManualClock();
  let stored: GateSnapshot | undefined = gate('closed');
  const reads: string[] = [];
  const read = jest.fn((name: string) => {
    reads.push(name);
    return Promise.resolve(stored);
  });
  const hub = new GateWatchHub(read, { intervalMs: 1000, clock, logger: new MemoryLogger() });
  return {
    clock,
    hub,
    reads,
    set: (g: GateSnapshot | undefined) => {
      stored = g;
    },
  };
}

const flush = async (): Promise<void> => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

describe('GateWatchHub', () => {
  test('a hundred listeners on one gate cost one read per interval, and all hear the release', async () => {
    const { clock, hub, reads, set } = setup();
    const heard: Observed[][] = Array.from({ length: 100 }, () => []);
    const stops = heard.map((list) => hub.subscribe('g', (o) => list.push(o)));
    await clock.advance(1000);
    await clock.advance(1000);
    expect(reads).toHaveLength(2);
    set(gate('released'));
    await clock.advance(1000);
    await flush();
    expect(reads).toHaveLength(3);
    expect(heard.every((list) => list.at(-1)?.gate?.state === 'released')).toBe(true);
    stops.forEach((stop) => stop());
    await clock.advance(5000);
    expect(reads).toHaveLength(3);
    expect(hub.stats()).toEqual({ gates: 0, listeners: 0, reads: 3 });
  });

  test('concurrent reads of a gate are one read, and a fresh watcher snapshot is reused', async () => {
    const { clock, hub, reads } = setup();
    const answers = await Promise.all(Array.from({ length: 50 }, () => hub.current('g')));
    expect(reads).toHaveLength(1);
    expect(answers.every((a) => a.gate?.state === 'closed')).toBe(true);
    const stop = hub.subscribe('g', () => undefined);
    await clock.advance(1000);
    const before = reads.length;
    await hub.current('g');
    expect(reads).toHaveLength(before);
    stop();
  });

  test('a release published in this process reaches the listeners without a read', () => {
    const { hub, reads } = setup();
    const heard: Observed[] = [];
    const stop = hub.subscribe('g', (o) => heard.push(o));
    hub.publish(gate('released'));
    expect(heard.map((o) => o.gate?.state)).toEqual(['released']);
    expect(reads).toHaveLength(0);
    stop();
  });

  test('a stale read never moves a gate backwards; unchanged state is not repeated', async () => {
    const { clock, hub } = setup();
    const heard: Observed[] = [];
    const stop = hub.subscribe('g', (o) => heard.push(o));
    hub.publish(gate('released'));
    await clock.advance(1000);
    await flush();
    await clock.advance(1000);
    await flush();
    expect(heard.map((o) => o.gate?.state)).toEqual(['released']);
    stop();
  });

  test('a failing read is logged and the watcher keeps going', async () => {
    const clock = new ManualClock();
    const logger = new MemoryLogger();
    let fail = true;
    const hub = new GateWatchHub(() => (fail ? Promise.reject(new Error('down')) : Promise.resolve(gate('released'))), {
      intervalMs: 1000,
      clock,
      logger,
    });
    const heard: Observed[] = [];
    const stop = hub.subscribe('g', (o) => heard.push(o));
    await clock.advance(1000);
    await flush();
    expect(logger.events('gates.watch.readFailed')).toHaveLength(1);
    fail = false;
    await clock.advance(2000);
    await flush();
    expect(heard.map((o) => o.gate?.state)).toEqual(['released']);
    stop();
  });
});
