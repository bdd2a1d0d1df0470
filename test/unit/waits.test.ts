/**
 * Waits on conditions (test/support/waits.ts): a wait ends on its condition or its failure, never on
 * a clock, and one still open when its test ends is given up with its report and rejected.
 */
import { AbandonedWait, abandonWaits, openWaits, until, waitingFor } from '../support/waits';

describe('until', () => {
  it('probes until the probe answers, and returns the answer', async () => {
    let probes = 0;
    const value = await until('the third probe', () => (++probes === 3 ? 'done' : undefined), { everyMs: 1 });
    expect({ value, probes, open: openWaits() }).toEqual({ value: 'done', probes: 3, open: [] });
  });

  it('fails as its probe fails', async () => {
    await expect(until('a probe that throws', () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    expect(openWaits()).toEqual([]);
  });

  it('given up, rejects at once with what it waited for and its report, and stops probing', async () => {
    let probes = 0;
    const waiting = until('nothing', () => void probes++, { everyMs: 60_000, report: () => 'seen: nothing yet' }).catch((e: unknown) => e);
    await until('the first probe', () => (probes > 0 ? true : undefined), { everyMs: 1 });
    const [given] = await abandonWaits('the test ended', false);
    const error = await waiting;
    expect(error).toBeInstanceOf(AbandonedWait);
    expect(error).toBe(given);
    expect((error as Error).message).toBe('gave up waiting for nothing: the test ended\nseen: nothing yet');
    const after = probes;
    await new Promise((r) => setImmediate(r));
    expect(probes).toBe(after);
  });
});

describe('waitingFor', () => {
  it('settles as what it waits for settles', async () => {
    await expect(waitingFor('a value', () => Promise.resolve(7))).resolves.toBe(7);
    await expect(waitingFor('a failure', () => Promise.reject(new Error('exited')))).rejects.toThrow('exited');
    expect(openWaits()).toEqual([]);
  });

  it('given up, aborts the signal it handed out and rejects with the report', async () => {
    let signal: AbortSignal | undefined;
    const waiting = waitingFor(
      'a host to listen',
      (s) => {
        signal = s;
        return new Promise<never>(() => undefined);
      },
      () => 'output so far: starting',
    ).catch((e: unknown) => e);
    expect(openWaits()).toEqual(['a host to listen']);
    await abandonWaits('the file ended', false);
    expect(((await waiting) as Error).message).toBe('gave up waiting for a host to listen: the file ended\noutput so far: starting');
    expect(signal?.aborted).toBe(true);
  });

  it('a report that fails still gives the wait up, saying why there is no report', async () => {
    const waiting = waitingFor(
      'x',
      () => new Promise<never>(() => undefined),
      () => Promise.reject(new Error('host gone')),
    ).catch((e: unknown) => e);
    await abandonWaits('done', false);
    expect(((await waiting) as Error).message).toBe('gave up waiting for x: done\n(no report: host gone)');
  });
});
