/**
 * A schedule's creator: stored with the row (rows written before creators were recorded still read),
 * shown in the view, and named when a run releases a gate.
 */
import { creatorOf, describeCreator } from '../../../shared/schedules/creator';
import { parseRow } from '../../../shared/schedules/scheduleTable';
import { runTarget } from '../../../shared/schedules/targets';
import { viewOf } from '../../../shared/schedules/views';

const stored = {
  partitionKey: 's1',
  etag: 'W/"1"',
  definition: JSON.stringify({ timing: { kind: 'once', at: '2099-01-01T00:00:00.000Z' }, target: { type: 'gateRelease', gate: 'g' } }),
  definitionKey: 'k',
  mode: 'orchestration',
  state: 'active',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  runs: '[]',
  runCount: 0,
  triggers: '[]',
  controlVersion: 0,
  ackVersion: 0,
};

describe('schedule creators', () => {
  test('a stored creator is read back and shown; a row from before creators were recorded shows null', () => {
    const row = parseRow({ ...stored, createdBy: JSON.stringify({ by: 'ops', level: 'admin' }) });
    expect(row.createdBy).toEqual({ by: 'ops', level: 'admin' });
    expect(viewOf(row, 'admin').createdBy).toEqual({ by: 'ops', level: 'admin' });
    const old = parseRow(stored);
    expect(old.createdBy).toBeUndefined();
    expect(viewOf(old, 'admin').createdBy).toBeNull();
  });

  test('a creator with an unknown level is corrupt state, not a silent admin', () => {
    expect(() => parseRow({ ...stored, createdBy: JSON.stringify({ by: 'x', level: 'root' }) })).toThrow(
      expect.objectContaining({ code: 'CorruptState' }) as Error,
    );
  });

  test('creatorOf names an anonymous creator "unnamed"; describeCreator says who and with which key', () => {
    expect(creatorOf(undefined, 'function', 'key:shared')).toEqual({ by: 'unnamed', level: 'function', owner: 'key:shared' });
    expect(describeCreator(creatorOf('ops', 'admin', 'admin:master-key'))).toBe('created by "ops" with the admin key');
    expect(describeCreator(undefined)).toBe('creator not recorded');
  });

  test('a gate release run names the schedule as actor and its creator in the audit note', async () => {
    const released: { gate: string; by: string; note: string }[] = [];
    const deps = {
      gates: {
        release: (gate: string, by: string, note: string) => {
          released.push({ gate, by, note });
          return Promise.resolve('released');
        },
      },
    } as unknown as Parameters<typeof runTarget>[2];
    const ctx = {
      scheduleId: 's1',
      runId: 's1#1',
      fire: { at: '2099-01-01T00:00:00.000Z', kind: 'scheduled' as const },
      createdBy: creatorOf('ops', 'admin', 'admin:master-key'),
    };
    await expect(runTarget({ type: 'gateRelease', gate: 'g' }, ctx, deps)).resolves.toEqual({ outcome: 'succeeded', detail: 'released' });
    expect(released).toEqual([
      { gate: 'g', by: 'schedule:s1', note: 'run s1#1 due 2099-01-01T00:00:00.000Z; schedule created by "ops" with the admin key' },
    ]);
  });
});
