/**
 * Durable engine overhead. Each scenario runs the same activity/entity functions through the
 * devhost's Durable engine and, as the baseline, invokes them directly through the same invoker
 * (the programming model, hooks included) — so the ratio is what orchestration costs on top:
 *   - 500-way fan-out/fan-in, wall time (baseline: 500 concurrent direct invocations);
 *   - 200-step sequence, wall time (baseline: 200 sequential direct invocations);
 *   - orchestration episodes per second (from those runs);
 *   - entity operations per second: 2,000 client signals to one entity (baseline: the entity function
 *     invoked directly with the same operations in one batch);
 *   - gate release: 1,000 orchestrations parked on an external event, released at once; latency from
 *     the release to each one's next activity running (p50/p99/max).
 * Each with the in-memory store and with the blob-log store on Azurite (what `npm start` uses).
 */
import { performance } from 'node:perf_hooks';

import type * as Df from 'durable-functions';

import { startAzurite } from '../devhost/azurite';
import { RealClock } from '../devhost/clock';
import { installCoreApi, Registry } from '../devhost/core/coreApi';
import { Invoker } from '../devhost/core/invoker';
import { DurableClientApi } from '../devhost/durable/client';
import { DurableEngine } from '../devhost/durable/engine';
import { DurableFunctions } from '../devhost/durable/functions';
import { MemoryStore } from '../devhost/durable/memoryStore';
import type { DurableStore } from '../devhost/durable/store';
import { BlobStore } from '../devhost/durable/blobStore';
import { header, Latency, machine, median, ratio, type Row, table } from './support/report';

const fanOutWidth = 500;
const sequenceSteps = 200;
const entityOps = 2000;
const gateWaiters = 1000;
const rounds = 3;

/** Called by the functions below, so waits are event-driven (polling would steal the CPU being measured). */
const hooks = {
  proceeded: new Map<string, number>(),
  onProceed: (_count: number): void => undefined,
  onCount: (_key: string, _value: number): void => undefined,
};

function registerApp(): void {
  // The core API must be in place before anything loads @azure/functions.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const df = require('durable-functions') as typeof Df;
  df.app.activity('benchDouble', { handler: (n: number) => n * 2 });
  df.app.activity('benchProceed', {
    handler: (id: string) => {
      hooks.proceeded.set(id, performance.now());
      hooks.onProceed(hooks.proceeded.size);
      return id;
    },
  });
  df.app.orchestration('benchFanOut', function* (context) {
    const n = context.df.getInput<number>();
    const results = (yield context.df.Task.all(Array.from({ length: n }, (_, i) => context.df.callActivity('benchDouble', i)))) as number[];
    return results.length;
  });
  df.app.orchestration('benchSequence', function* (context) {
    const n = context.df.getInput<number>();
    let total = 0;
    for (let i = 0; i < n; i++) total += (yield context.df.callActivity('benchDouble', i)) as number;
    return total;
  });
  df.app.orchestration('benchGate', function* (context) {
    yield context.df.waitForExternalEvent('release');
    return yield context.df.callActivity('benchProceed', context.df.instanceId);
  });
  df.app.entity('benchCounter', (context) => {
    const value = (context.df.getState(() => 0) as number) + (context.df.getInput() as number);
    context.df.setState(value);
    hooks.onCount(context.df.entityKey, value);
  });
}

interface Setup {
  readonly engine: DurableEngine;
  readonly client: DurableClientApi;
  readonly functions: DurableFunctions;
  readonly counter: { episodes: number };
}

async function setup(registry: Registry, store: DurableStore): Promise<Setup> {
  const functions = new DurableFunctions(
    [...registry.functions.values()].map((f) => f.metadata),
    new Invoker(registry),
  );
  const counter = { episodes: 0 };
  const engine = new DurableEngine({
    store,
    clock: new RealClock(),
    functions,
    log: (level, message) => {
      if (level === 'error') console.error(message);
    },
    observer: {
      episode: () => {
        counter.episodes++;
      },
    },
  });
  await engine.start();
  return { engine, client: new DurableClientApi(engine), functions, counter };
}

async function runToCompletion(s: Setup, name: string, input: number): Promise<{ ms: number; episodes: number }> {
  const before = s.counter.episodes;
  const started = performance.now();
  const id = await s.client.start(name, { input: String(input) });
  await s.client.waitForCompletion(id, 120_000);
  const ms = performance.now() - started;
  const status = s.client.status(id);
  if (status?.runtimeStatus !== 'Completed') throw new Error(`${name} ended ${status?.runtimeStatus}: ${JSON.stringify(status?.output)}`);
  return { ms, episodes: s.counter.episodes - before };
}

async function direct(functions: DurableFunctions, concurrent: boolean, n: number): Promise<number> {
  const started = performance.now();
  const one = async (i: number): Promise<void> => {
    const outcome = await functions.invoke('activity', 'benchDouble', { string: String(i) });
    if (!outcome.ok) throw outcome.error;
  };
  if (concurrent) await Promise.all(Array.from({ length: n }, (_, i) => one(i)));
  else for (let i = 0; i < n; i++) await one(i);
  return performance.now() - started;
}

function signalled<T>(arm: (resolve: (value: T) => void) => void, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('Timed out')), timeoutMs);
    arm((value) => {
      clearTimeout(timer);
      resolve(value);
    });
  });
}

async function entityRun(s: Setup, key: string): Promise<number> {
  const started = performance.now();
  const done = signalled<number>((resolve) => {
    hooks.onCount = (k, value) => {
      if (k === key && value === entityOps) resolve(performance.now());
    };
  }, 120_000);
  await Promise.all(Array.from({ length: entityOps }, () => s.client.signalEntity('benchCounter', key, 'add', '1')));
  return (await done) - started;
}

async function entityBaseline(functions: DurableFunctions): Promise<number> {
  const started = performance.now();
  const batch = Array.from({ length: entityOps }, () => ({ name: 'add', input: '1', isSignal: true }));
  const request = { self: { name: 'benchcounter', key: 'direct' }, exists: false, state: null, batch };
  const outcome = await functions.invoke('entity', 'benchCounter', { string: JSON.stringify(request) });
  if (!outcome.ok) throw outcome.error;
  return performance.now() - started;
}

async function gateRun(s: Setup, label: string): Promise<Latency> {
  const ids = Array.from({ length: gateWaiters }, (_, i) => `gate-${label}-${i}`.replace(/[^A-Za-z0-9-]/g, ''));
  for (const id of ids) await s.client.start('benchGate', { instanceId: id });
  // every waiter has run its first episode and waits for the event
  await signalled<void>((resolve) => {
    const check = (): void => {
      if (s.engine.idle() && ids.every((id) => s.client.status(id)?.runtimeStatus === 'Running')) resolve();
      else setTimeout(check, 20);
    };
    check();
  }, 120_000);
  hooks.proceeded.clear();
  const allProceeded = signalled<void>((resolve) => {
    hooks.onProceed = (count) => {
      if (count === gateWaiters) resolve();
    };
  }, 120_000);
  const released = performance.now();
  await Promise.all(ids.map((id) => s.client.raiseEvent(id, 'release', 'true')));
  await allProceeded;
  const latency = new Latency();
  for (const id of ids) latency.recordMs((hooks.proceeded.get(id) as number) - released);
  await Promise.all(ids.map((id) => s.client.waitForCompletion(id, 60_000)));
  return latency;
}

async function scenario(label: string, s: Setup): Promise<Row[]> {
  const rows: Row[] = [];
  await runToCompletion(s, 'benchFanOut', 50); // warm-up
  const fan = [];
  const fanBase = [];
  const seq = [];
  const seqBase = [];
  for (let r = 0; r < rounds; r++) {
    fan.push(await runToCompletion(s, 'benchFanOut', fanOutWidth));
    fanBase.push(await direct(s.functions, true, fanOutWidth));
    seq.push(await runToCompletion(s, 'benchSequence', sequenceSteps));
    seqBase.push(await direct(s.functions, false, sequenceSteps));
  }
  const fanMs = median(fan.map((f) => f.ms));
  const seqMs = median(seq.map((f) => f.ms));
  ratio(`${label}: ${fanOutWidth}-way fan-out wall time vs direct invocations`, fanMs, median(fanBase));
  ratio(`${label}: ${sequenceSteps}-step sequence wall time vs direct invocations`, seqMs, median(seqBase));
  const seqEpisodesPerSecond = (median(seq.map((f) => f.episodes)) / seqMs) * 1000;
  const ents = [];
  const entBase = [];
  for (let r = 0; r < rounds; r++) {
    ents.push(await entityRun(s, `${label}-${r}`));
    entBase.push(await entityBaseline(s.functions));
  }
  const entMs = median(ents);
  ratio(`${label}: ${entityOps} entity operations vs one direct batch`, entMs, median(entBase));
  const gate = await gateRun(s, label);
  rows.push(
    {
      store: label,
      measure: `${fanOutWidth}-way fan-out`,
      engine: `${fanMs.toFixed(0)} ms`,
      baseline: `${median(fanBase).toFixed(0)} ms`,
      note: `${median(fan.map((f) => f.episodes))} episodes`,
    },
    {
      store: label,
      measure: `${sequenceSteps}-step sequence`,
      engine: `${seqMs.toFixed(0)} ms`,
      baseline: `${median(seqBase).toFixed(0)} ms`,
      note: `${seqEpisodesPerSecond.toFixed(0)} episodes/s`,
    },
    {
      store: label,
      measure: 'entity operations',
      engine: `${((entityOps / entMs) * 1000).toFixed(0)} ops/s`,
      baseline: `${((entityOps / median(entBase)) * 1000).toFixed(0)} ops/s`,
      note: `${entityOps} client signals, one entity`,
    },
    {
      store: label,
      measure: `gate release (${gateWaiters} waiters)`,
      engine: `p50 ${gate.percentileMs(50).toFixed(0)} ms, p99 ${gate.percentileMs(99).toFixed(0)} ms`,
      baseline: '-',
      note: `max ${gate.maxMs.toFixed(0)} ms (target p99 < 1000 ms: ${gate.percentileMs(99) < 1000 ? 'met' : 'NOT met'})`,
    },
  );
  return rows;
}

async function main(): Promise<void> {
  header('durable');
  const registry = new Registry();
  installCoreApi(registry);
  registerApp();
  registry.locked = true;
  const rows: Row[] = [];
  const memory = await setup(registry, new MemoryStore());
  rows.push(...(await scenario('memory', memory)));
  await memory.engine.stop();
  const azurite = await startAzurite();
  try {
    const tables = await setup(registry, new BlobStore(azurite.connectionString, `bench${Date.now()}-devhost`));
    rows.push(...(await scenario('blob log (Azurite)', tables)));
    await tables.engine.stop();
  } finally {
    await azurite.stop();
  }
  table(`Durable engine (${machine()})`, rows);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
