/**
 * The depth gauge's read (shared/streams/depthGauge.ts): per partition, the sum of its writers'
 * ledgers; a partition with a writer whose ledger could not be read reports nothing rather than a
 * sum short of that writer. test/integration/telemetry/streamsAppend.test.ts shows the gauge moving
 * with a writer's state through the app's own entities.
 */
import { partitionDepths } from '../../../shared/streams/depthGauge';
import type { LedgerState, WriterSnapshot } from '../../../shared/streams/ledger';

function ledger(buffered: number, inflight: number): LedgerState {
  return { snapshot: { rev: 1, buffered, inflight } as WriterSnapshot, receipts: [] };
}

describe('the buffer depth per partition, read from the writers’ ledgers', () => {
  it('sums buffered and in-flight events over each partition’s writers; a writer that never reported counts 0', async () => {
    const ledgers: Record<string, LedgerState | undefined> = { 'p00:a': ledger(3, 2), 'p00:b': ledger(1, 0), 'p01:c': undefined };
    const depths = await partitionDepths({
      writers: () => Promise.resolve(Object.keys(ledgers)),
      readLedger: (key) => Promise.resolve(ledgers[key]),
    });
    expect(Object.fromEntries(depths)).toEqual({ p00: 6, p01: 0 });
  });

  it('leaves out a partition one of whose writers could not be read, and only that one', async () => {
    const depths = await partitionDepths({
      writers: () => Promise.resolve(['p00:a', 'p00:b', 'p01:c']),
      readLedger: (key) => (key === 'p00:b' ? Promise.reject(new Error('unavailable')) : Promise.resolve(ledger(4, 0))),
    });
    expect(Object.fromEntries(depths)).toEqual({ p01: 4 });
  });

  it('fails as a whole when the writers cannot be listed (the gauge then reports nothing)', async () => {
    await expect(
      partitionDepths({ writers: () => Promise.reject(new Error('table down')), readLedger: () => Promise.resolve(undefined) }),
    ).rejects.toThrow('table down');
  });
});
