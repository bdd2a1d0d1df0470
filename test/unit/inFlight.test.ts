import { InFlight } from '../../shared/inFlight';

/** A task settled from outside, whose `then` calls are counted (what a wait attaches to it). */
function task(): { promise: Promise<void>; thens: () => number; resolve: () => void; reject: (err: Error) => void } {
  let thens = 0;
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  const then = promise.then.bind(promise);
  // Counting the reactions a wait adds is the point.
  promise.then = ((...args: Parameters<typeof then>) => {
    thens++;
    return then(...args);
  }) as typeof promise.then;
  return { promise, thens: () => thens, resolve, reject };
}

describe('InFlight', () => {
  it('wakes every open wait when the next task ends, with one reaction per task however many waits there were', async () => {
    const inFlight = new InFlight();
    const tasks = [task(), task(), task()];
    for (const t of tasks) inFlight.add(t.promise);
    let woken = 0;
    const waits = Array.from({ length: 50 }, () => inFlight.next().then(() => woken++));
    await Promise.resolve();
    expect(woken).toBe(0);
    // Promise.race over the set would have attached 50 reactions to each task.
    expect(tasks.map((t) => t.thens())).toEqual([1, 1, 1]);

    tasks[1]!.resolve();
    await Promise.all(waits);
    expect(woken).toBe(50);
    expect(inFlight.size).toBe(2);

    tasks[0]!.resolve();
    tasks[2]!.resolve();
    await inFlight.settled();
    expect(inFlight.size).toBe(0);
  });

  it('a wait with nothing under way resolves at once', async () => {
    await expect(new InFlight().next()).resolves.toBeUndefined();
  });

  it('a task that rejects rejects the open waits, and settled() after every task ended', async () => {
    const inFlight = new InFlight();
    const [a, b] = [task(), task()];
    inFlight.add(a.promise);
    inFlight.add(b.promise);
    const wait = inFlight.next();
    a.reject(new Error('boom'));
    await expect(wait).rejects.toThrow('boom');

    let settled = false;
    const all = inFlight.settled().finally(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    b.resolve();
    await expect(all).rejects.toThrow('boom');
  });

  it('a rejection no wait saw is not left unhandled: settled() reports it', async () => {
    const inFlight = new InFlight();
    const a = task();
    inFlight.add(a.promise);
    a.reject(new Error('unseen'));
    await expect(inFlight.settled()).rejects.toThrow('unseen');
  });
});
