/** The gate entity function: validates its input, stores what the transitions return, answers their result. */
import type { EntityContext } from 'durable-functions';

import { gateEntity } from '../../../shared/gates/gate.entity';
import type { GateRecord } from '../../../shared/gates/operations';

interface Harness {
  state: GateRecord | undefined;
  returned: unknown;
  sets: number;
  errors: string[];
}

function invoke(h: Harness, operationName: string, input: unknown): void {
  const context = {
    error: (message: string) => h.errors.push(message),
    df: {
      entityKey: 'g',
      operationName,
      getState: () => h.state,
      setState: (s: GateRecord) => {
        h.state = JSON.parse(JSON.stringify(s)) as GateRecord;
        h.sets++;
      },
      getInput: () => input,
      return: (r: unknown) => {
        h.returned = r;
      },
    },
  } as unknown as EntityContext<GateRecord>;
  gateEntity(context);
}

const at = '2026-01-01T00:00:00.000Z';

describe('gate entity', () => {
  test('create, register, release: state stored, results returned', () => {
    const h: Harness = { state: undefined, returned: undefined, sets: 0, errors: [] };
    invoke(h, 'create', { name: 'g', at, releaseAt: null });
    expect(h.returned).toMatchObject({ created: true, gate: { generation: 1 } });
    invoke(h, 'register', { waiter: 'run-1', maxWaiters: 10 });
    expect(h.returned).toEqual({ outcome: 'waiting', generation: 1 });
    invoke(h, 'release', { generation: 1, at, by: 'alice', how: 'api' });
    expect(h.returned).toMatchObject({ outcome: 'released', waiters: ['run-1'] });
    expect(h.state).toMatchObject({ state: 'released', waiting: [] });
    expect(h.sets).toBe(3);
  });

  test('an operation on a missing gate stores nothing', () => {
    const h: Harness = { state: undefined, returned: undefined, sets: 0, errors: [] };
    invoke(h, 'register', { waiter: 'run-1', maxWaiters: 10 });
    expect(h.returned).toEqual({ outcome: 'missing' });
    expect(h.sets).toBe(0);
    expect(h.state).toBeUndefined();
  });

  test('an unknown operation or invalid input throws, is logged and changes nothing', () => {
    const h: Harness = { state: undefined, returned: undefined, sets: 0, errors: [] };
    invoke(h, 'create', { name: 'g', at, releaseAt: null });
    const before = JSON.stringify(h.state);
    expect(() => invoke(h, 'delete', {})).toThrow('Unknown gate operation "delete"');
    expect(() => invoke(h, 'release', { generation: 0, at, by: 'x', how: 'api' })).toThrow('invalid input for "release"');
    expect(() => invoke(h, 'release', { at: 'yesterday', by: 'x', how: 'api' })).toThrow('invalid input');
    expect(() => invoke(h, 'register', { waiter: '', maxWaiters: 1 })).toThrow('invalid input');
    expect(h.errors).toHaveLength(4);
    expect(JSON.stringify(h.state)).toBe(before);
  });

  test('a corrupt stored state is refused rather than overwritten', () => {
    const h: Harness = { state: { version: 2 } as unknown as GateRecord, returned: undefined, sets: 0, errors: [] };
    expect(() => invoke(h, 'register', { waiter: 'run-1', maxWaiters: 10 })).toThrow();
    expect(h.sets).toBe(0);
  });
});
