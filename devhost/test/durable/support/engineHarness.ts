/**
 * In-process harness for durable engine tests: the fixture app registered through the real
 * `@azure/functions` + `durable-functions` code, an engine on a virtual clock, the id cross-check on
 * every episode, and waits that fail with the instance's history instead of hanging.
 */
import { VirtualClock } from '../../../clock';
import { Invoker } from '../../../core/invoker';
import { DurableClientApi } from '../../../durable/client';
import { describeInstance } from '../../../durable/debug';
import { DurableEngine, type EngineLimits } from '../../../durable/engine';
import { DurableFunctions } from '../../../durable/functions';
import { MemoryStore } from '../../../durable/memoryStore';
import type { HistoryEvent } from '../../../durable/protocol';
import type { DurableStore } from '../../../durable/store';
import type { StatusPayload } from '../../../durable/status';
import { registry } from './coreModule';
import { until } from '../../../../test/support/waits';
import { IdCrossCheck } from './crossCheck';

export const crossCheck = new IdCrossCheck();
let loaded = false;

/** Registers the fixture app once per test file (registrations live in the file's module registry). */
function loadFixtureApp(): void {
  if (loaded) return;
  loaded = true;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the app is loaded like the host loads it
  require('../fixtures/durable-app/index.js');
  crossCheck.install();
}

export interface Harness {
  readonly engine: DurableEngine;
  readonly client: DurableClientApi;
  readonly clock: VirtualClock;
  readonly store: DurableStore;
  readonly logs: string[];
}

export const epoch = Date.parse('2026-03-01T00:00:00Z');

export async function startEngine(
  options: { store?: DurableStore; clock?: VirtualClock; limits?: Partial<EngineLimits>; reorderWindowMinutes?: number } = {},
): Promise<Harness> {
  loadFixtureApp();
  const clock = options.clock ?? new VirtualClock(epoch);
  const store = options.store ?? new MemoryStore();
  const logs: string[] = [];
  const functions = new DurableFunctions(
    [...registry.functions.values()].map((f) => f.metadata),
    new Invoker(registry),
  );
  const engine = new DurableEngine({
    store,
    clock,
    functions,
    log: (level, message) => logs.push(`${level}: ${message}`),
    observer: { episode: crossCheck.episode },
    ...(options.limits === undefined ? {} : { limits: options.limits }),
    ...(options.reorderWindowMinutes === undefined ? {} : { entityMessageReorderWindowMinutes: options.reorderWindowMinutes }),
  });
  await engine.start();
  return { engine, client: new DurableClientApi(engine), clock, store, logs };
}

/**
 * Waits until the engine has nothing running, queued or due (real time; engines settle in ms). No
 * budget of its own (test/support/waits.ts): given up, it reports the engine's log.
 */
export async function settle(h: Harness): Promise<void> {
  // Two consecutive idle checks across a macrotask: completions resolve through promise chains.
  let quiet = 0;
  await until(
    'the engine to settle',
    () => {
      quiet = h.engine.idle() ? quiet + 1 : 0;
      return quiet >= 2 ? true : undefined;
    },
    { everyMs: 0, report: () => h.logs.join('\n') },
  );
}

/**
 * Runs the engine (advancing the virtual clock to each next timer) until the instance reaches one of
 * `statuses`; on failure the message carries the instance's history and what it waits for.
 */
export async function runUntil(
  h: Harness,
  instanceId: string,
  statuses: readonly string[] = ['Completed', 'Failed', 'Terminated'],
  maxSteps = 1000,
): Promise<StatusPayload> {
  for (let step = 0; step < maxSteps; step++) {
    await settle(h);
    const status = h.client.status(instanceId, { showHistory: false });
    if (status !== undefined && statuses.includes(status.runtimeStatus)) return status;
    const next = h.clock.nextDue();
    if (next === undefined) break;
    h.clock.advanceTo(next);
  }
  throw new Error(`${instanceId} did not reach ${statuses.join('/')}\n${describeInstance(h.engine, instanceId)}\n${h.logs.join('\n')}`);
}

export function history(h: Harness, instanceId: string): readonly HistoryEvent[] {
  const rt = h.engine.orchestrations.get(instanceId);
  if (rt === undefined) throw new Error(`No instance ${instanceId}`);
  return rt.record.history;
}
