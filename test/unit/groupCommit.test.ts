import { GroupCommit, type GroupCommitOptions } from '../../shared/groupCommit';

/** A fake store: every write is recorded and stays pending until the test settles it. */
class FakeStore {
  readonly writes: { key: string; items: number[]; settle: (err?: Error) => void }[] = [];

  readonly write = (key: string, items: readonly number[]): Promise<number> =>
    new Promise<number>((resolve, reject) => {
      const sum = items.reduce((a, b) => a + b, 0);
      this.writes.push({ key, items: [...items], settle: (err) => (err === undefined ? resolve(sum) : reject(err)) });
    });

  batches(key?: string): number[][] {
    return this.writes.filter((w) => key === undefined || w.key === key).map((w) => w.items);
  }

  /** Settles write `n` (in start order) and lets the callers and the next write run. */
  async finish(n: number, err?: Error): Promise<void> {
    const write = this.writes[n];
    if (write === undefined) throw new Error(`no write ${n}`);
    write.settle(err);
    for (let i = 0; i < 5; i++) await Promise.resolve();
  }
}

interface Outcome {
  value?: number;
  error?: string;
}

function track(promise: Promise<number>): Outcome {
  const outcome: Outcome = {};
  promise.then(
    (value) => (outcome.value = value),
    (err: unknown) => (outcome.error = err instanceof Error ? err.message : String(err)),
  );
  return outcome;
}

function setup(options: Partial<GroupCommitOptions> = {}) {
  const store = new FakeStore();
  const commit = new GroupCommit(store.write, { maxInFlight: 1, maxItems: 100, ...options });
  return { store, commit, submit: (key: string, item: number, max?: number) => track(commit.submit(key, item, max)) };
}

describe('GroupCommit', () => {
  it('writes a lone item at once, alone, and answers its caller with that write', async () => {
    const { store, submit, commit } = setup();
    const a = submit('k', 5);
    // Synchronously: no window, no timer.
    expect(store.batches()).toEqual([[5]]);
    expect(a).toEqual({});
    await store.finish(0);
    expect(a).toEqual({ value: 5 });
    expect(commit.activeKeys).toBe(0);
  });

  it('gathers the items that arrive during a write into the next one, oldest first, answering each after its own write', async () => {
    const { store, submit } = setup();
    const first = submit('k', 1);
    const waiting = [2, 3, 4].map((n) => submit('k', n));
    expect(store.batches()).toEqual([[1]]);
    await store.finish(0);
    expect(first).toEqual({ value: 1 });
    // The first write's success answers only its own caller; the others' write has just started.
    expect(waiting).toEqual([{}, {}, {}]);
    expect(store.batches()).toEqual([[1], [2, 3, 4]]);
    const late = submit('k', 5);
    await store.finish(1);
    expect(waiting).toEqual([{ value: 9 }, { value: 9 }, { value: 9 }]);
    expect(late).toEqual({});
    expect(store.batches()).toEqual([[1], [2, 3, 4], [5]]);
    await store.finish(2);
    expect(late).toEqual({ value: 5 });
  });

  it('keeps at most maxInFlight writes of a key under way; a free slot takes everything waiting', async () => {
    const { store, submit, commit } = setup({ maxInFlight: 2 });
    submit('k', 1);
    submit('k', 2);
    submit('k', 3);
    submit('k', 4);
    expect(store.batches()).toEqual([[1], [2]]);
    // The second write finishes first: its slot takes both waiting items.
    await store.finish(1);
    expect(store.batches()).toEqual([[1], [2], [3, 4]]);
    await store.finish(0);
    await store.finish(2);
    expect(store.writes).toHaveLength(3);
    expect(commit.activeKeys).toBe(0);
  });

  it('takes at most maxItems per write and leaves the rest, in order, for the next', async () => {
    const { store, submit } = setup({ maxItems: 2 });
    const outcomes = [1, 2, 3, 4, 5, 6].map((n) => submit('k', n));
    await store.finish(0);
    await store.finish(1);
    await store.finish(2);
    await store.finish(3);
    expect(store.batches()).toEqual([[1], [2, 3], [4, 5], [6]]);
    expect(outcomes.map((o) => o.value)).toEqual([1, 5, 5, 9, 9, 6]);
  });

  it('fails every caller of a failed write with its error, and no one else; the key goes on', async () => {
    const { store, submit, commit } = setup();
    const first = submit('k', 1);
    const batch = [2, 3].map((n) => submit('k', n));
    await store.finish(0);
    const after = submit('k', 4);
    await store.finish(1, new Error('storage unavailable'));
    expect(first).toEqual({ value: 1 });
    expect(batch).toEqual([{ error: 'storage unavailable' }, { error: 'storage unavailable' }]);
    expect(after).toEqual({});
    expect(store.batches()).toEqual([[1], [2, 3], [4]]);
    await store.finish(2);
    expect(after).toEqual({ value: 4 });
    expect(commit.activeKeys).toBe(0);
  });

  it('rejects the callers of a write function that throws instead of returning a promise', async () => {
    let calls = 0;
    const commit = new GroupCommit<number, number>(
      () => {
        if (calls++ === 0) throw new Error('broken');
        return Promise.resolve(7);
      },
      { maxInFlight: 1, maxItems: 10 },
    );
    await expect(commit.submit('k', 1)).rejects.toThrow('broken');
    await expect(commit.submit('k', 1)).resolves.toBe(7);
  });

  it('keeps keys independent: a slow write of one key holds up no other', async () => {
    const { store, submit } = setup();
    submit('a', 1);
    submit('a', 2);
    const b = submit('b', 10);
    expect(store.batches()).toEqual([[1], [10]]);
    await store.finish(1);
    expect(b).toEqual({ value: 10 });
    expect(store.batches('a')).toEqual([[1]]);
  });

  it('lets a submit set its key’s number of slots', () => {
    const { store, submit } = setup({ maxInFlight: 4 });
    for (let n = 1; n <= 4; n++) submit('narrow', n, 1);
    for (let n = 1; n <= 4; n++) submit('wide', n);
    expect(store.batches('narrow')).toEqual([[1]]);
    expect(store.batches('wide')).toEqual([[1], [2], [3], [4]]);
  });

  it('refuses bounds below one', () => {
    const write = (): Promise<void> => Promise.resolve();
    expect(() => new GroupCommit(write, { maxInFlight: 0, maxItems: 1 })).toThrow(RangeError);
    expect(() => new GroupCommit(write, { maxInFlight: 1, maxItems: 0.5 })).toThrow(RangeError);
    expect(() => new GroupCommit(write, { maxInFlight: 1, maxItems: 1 }).submit('k', 1, 0)).toThrow(RangeError);
  });
});
