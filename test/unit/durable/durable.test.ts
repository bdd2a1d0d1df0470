/**
 * The one Durable layer (shared/durable): one status set, one startSingleton meaning, and the
 * app's source of a client for work outside invocations with its 503 before the first one.
 */
import { type DurableClient, type InstanceStatus, isFinished, isLive } from '../../../shared/durable/client';
import { startSingleton } from '../../../shared/durable/singleton';
import { DurableClientSource } from '../../../shared/durable/source';
import { isAppError } from '../../../shared/errors';

const status = (runtimeStatus: string): InstanceStatus => ({ runtimeStatus, customStatus: null, output: null });

/** startNew/getStatus as a script: `refuse` makes the next start throw `refusal`, `existing` is what a status read answers. */
function scripted(options: { refuse?: boolean; existing?: InstanceStatus; statusFails?: boolean } = {}) {
  const refusal = new Error('An instance with ID x already exists');
  const calls: string[] = [];
  const client: Pick<DurableClient, 'startNew' | 'getStatus'> = {
    startNew: (orchestration, instanceId) => {
      calls.push(`start ${orchestration} ${instanceId}`);
      return options.refuse === true ? Promise.reject(refusal) : Promise.resolve();
    },
    getStatus: (instanceId) => {
      calls.push(`status ${instanceId}`);
      return options.statusFails === true ? Promise.reject(new Error('status read failed')) : Promise.resolve(options.existing);
    },
  };
  return { client, calls, refusal };
}

describe('runtime statuses', () => {
  it('every status the Durable HTTP API answers is live or finished, never both', () => {
    for (const s of ['Running', 'Pending', 'ContinuedAsNew', 'Suspended'])
      expect([s, isLive(status(s)), isFinished(status(s))]).toEqual([s, true, false]);
    for (const s of ['Completed', 'Failed', 'Canceled', 'Terminated'])
      expect([s, isLive(status(s)), isFinished(status(s))]).toEqual([s, false, true]);
  });

  it('no instance is neither', () => {
    expect([isLive(undefined), isFinished(undefined)]).toEqual([false, false]);
  });
});

describe('startSingleton', () => {
  it('starts the instance and says so, without reading its status first', async () => {
    const { client, calls } = scripted();
    await expect(startSingleton(client, 'orch', 'x', {})).resolves.toBe('started');
    expect(calls).toEqual(['start orch x']);
  });

  it.each(['Running', 'Pending', 'Completed', 'Failed'])(
    'a refused start with an instance there (%s: a concurrent caller started it) is `existing`',
    async (runtimeStatus) => {
      const { client, calls } = scripted({ refuse: true, existing: status(runtimeStatus) });
      await expect(startSingleton(client, 'orch', 'x', {})).resolves.toBe('existing');
      expect(calls).toEqual(['start orch x', 'status x']);
    },
  );

  it("a refused start with no instance there is the start's own failure", async () => {
    const { client, refusal } = scripted({ refuse: true });
    await expect(startSingleton(client, 'orch', 'x', {})).rejects.toBe(refusal);
  });

  it('a refused start whose status cannot be read either fails with the start error, not the read error', async () => {
    const { client, refusal } = scripted({ refuse: true, statusFails: true });
    await expect(startSingleton(client, 'orch', 'x', {})).rejects.toBe(refusal);
  });
});

describe('DurableClientSource', () => {
  const client = (name: string) => ({ name }) as unknown as DurableClient;

  it('before any invocation offered a client: a retryable 503 that says so', () => {
    const source = new DurableClientSource();
    let thrown: unknown;
    try {
      source.client();
    } catch (err) {
      thrown = err;
    }
    expect(isAppError(thrown)).toBe(true);
    if (!isAppError(thrown)) return;
    expect({ code: thrown.code, status: thrown.status, retryable: thrown.retryable, retryAfter: thrown.retryAfterSeconds }).toEqual({
      code: 'DependencyUnavailable',
      status: 503,
      retryable: true,
      retryAfter: 1,
    });
    expect(thrown.message).toMatch(/^No Durable client yet/);
    expect(source.peek()).toBeUndefined();
  });

  it('keeps the first client offered (every invocation of the app carries the same binding data)', () => {
    const source = new DurableClientSource();
    const first = client('first');
    source.offer(first);
    source.offer(client('second'));
    expect(source.client()).toBe(first);
    expect(source.peek()).toBe(first);
  });
});
