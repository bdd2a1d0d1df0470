/** The one Durable layer (shared/durable): one status set and one startSingleton meaning. */
import { type DurableClient, type InstanceStatus, isFinished, isLive } from '../../../shared/durable/client';
import { startSingleton } from '../../../shared/durable/singleton';

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
