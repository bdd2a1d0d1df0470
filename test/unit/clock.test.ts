import { getEventListeners } from 'node:events';

import { type Clock, ManualClock, systemClock } from '../../shared/clock';

describe('ManualClock', () => {
  it('wakes sleepers in time order as time passes them, not before', async () => {
    const clock = new ManualClock(0);
    const woke: string[] = [];
    void clock.sleep(30).then(() => woke.push('30'));
    void clock.sleep(10).then(() => woke.push('10'));
    await clock.advance(9);
    expect(woke).toEqual([]);
    await clock.advance(25);
    expect(woke).toEqual(['10', '30']);
    expect(clock.now()).toBe(34);
  });

  it('rejects a sleep when its signal aborts, and forgets the sleeper', async () => {
    const clock = new ManualClock(0);
    const abort = new AbortController();
    const sleeping = clock.sleep(1000, abort.signal);
    abort.abort(new Error('stop'));
    await expect(sleeping).rejects.toThrow('stop');
    expect(clock.pendingSleeps).toBe(0);
  });

  it('rejects at once on a signal that has already aborted', async () => {
    const abort = new AbortController();
    abort.abort();
    await expect(new ManualClock(0).sleep(10, abort.signal)).rejects.toThrow('aborted');
  });
});

describe.each<[string, () => { clock: Clock; pass: (ms: number) => Promise<void> }]>([
  [
    'ManualClock',
    () => {
      const clock = new ManualClock(0);
      return { clock, pass: (ms) => clock.advance(ms) };
    },
  ],
  ['systemClock', () => ({ clock: systemClock, pass: (ms) => new Promise((resolve) => setTimeout(resolve, ms + 5)) })],
])('%s sleeping on one long-lived signal', (_name, make) => {
  it('leaves no abort listener behind once a sleep is over', async () => {
    const { clock, pass } = make();
    const loop = new AbortController();
    for (let i = 0; i < 20; i++) {
      const sleeping = clock.sleep(1, loop.signal);
      await pass(1);
      await sleeping;
    }
    expect(getEventListeners(loop.signal, 'abort')).toHaveLength(0);
  });
});
