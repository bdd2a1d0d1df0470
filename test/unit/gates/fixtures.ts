/** Gate values the gates unit tests share. */
import type { GateSettings } from '../../../shared/gates/settings';
import type { GateSnapshot } from '../../../shared/gates/operations';

export const settings: GateSettings = {
  waitMaxSeconds: 120,
  sseMaxSeconds: 60,
  heartbeatSeconds: 15,
  watchIntervalMs: 1000,
  notifyBatchSize: 50,
  maxWaiters: 100,
  commandWaitMs: 2000,
};

const createdAt = '2026-01-01T00:00:00.000Z';

/** A closed gate `g` at generation 1 unless overridden. */
export function snapshot(overrides: Partial<GateSnapshot> = {}): GateSnapshot {
  return {
    name: 'g',
    generation: 1,
    state: 'closed',
    createdAt,
    generationStartedAt: createdAt,
    releaseAt: null,
    release: null,
    waiters: { waiting: 0, registered: 0, late: 0, proceeded: 0 },
    ...overrides,
  };
}

/** `g` closed or released (by `a` through the API a minute after creation) at `generation`. */
export function gate(state: 'closed' | 'released', generation = 1): GateSnapshot {
  return snapshot({
    generation,
    state,
    release: state === 'released' ? { generation, at: '2026-01-01T00:01:00.000Z', by: 'a', how: 'api' } : null,
  });
}
