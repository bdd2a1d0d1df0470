/**
 * The streams metrics of the appends and the buffer depth. Accepted and duplicate events are recorded
 * by the append (shared/streams/append.ts), after the writer (a Durable entity) answered; the depth
 * is read from each writer's ledger when the reader collects (shared/streams/depthGauge.ts). Here the
 * entities run in a fake Durable runtime (in memory: a signal runs the app's own writer and ledger
 * entity functions at once, and the flusher's rounds are played by the test with the app's own log
 * activities), and the metrics go to an in-memory reader collected between steps: the depth moves
 * with the writer's state — up with appends, 0 once flushed, and no point while the ledger cannot be
 * read.
 */
import { randomUUID } from 'node:crypto';

import type { EntityContext } from 'durable-functions';

import { loadAppConfig } from '../../../shared/app/settings';
import { seededRandom, systemClock } from '../../../shared/clock';
import type { DurableClient } from '../../../shared/durable/client';
import type { EntityRef } from '../../../shared/durable/entities';
import { MemoryLogger } from '../../../shared/log';
import { containers, tables } from '../../../shared/resources';
import { occBackoff } from '../../../shared/retry';
import { createStreams } from '../../../shared/streams';
import { streamLedgerEntity } from '../../../shared/streams/ledger.entity';
import type { LogActivities } from '../../../shared/streams/activities';
import { parseWriterKey, streamsDurable, writerEntity, writerKey, writerOps } from '../../../shared/streams/names';
import type { FlushPlan } from '../../../shared/streams/writerState';
import { streamWriterEntity } from '../../../shared/streams/writer.entity';
import { storageFor } from '../../support/sequences';
import { runStorage } from '../../support/storageAccounts';
import { memoryTelemetry } from '../../support/telemetry';

interface Signal {
  readonly entity: EntityRef;
  readonly operation: string;
  readonly input: unknown;
}

interface FakeDurable extends DurableClient {
  /** An orchestration's `callEntity`: runs the operation (and what it signals) and answers what it returned. */
  call(entity: EntityRef, operation: string, input: unknown): unknown;
  /** While set, reading an entity's state fails, as when the Durable API or its storage is down. */
  failReads: boolean;
}

/**
 * A fake of the Durable runtime for the streams' entities: a signal runs the entity function at once,
 * as a batch of its own (and the signals it sends after it, in order: the writer's `settle`
 * included), states are kept in a map; every flusher counts as running. On a host the writer's
 * report reaches the ledger later; the append polls the ledger until its receipt is there, so "at
 * once" is one of the orders a host can produce.
 */
function inMemoryDurable(): FakeDurable {
  const states = new Map<string, unknown>();
  const id = (entity: EntityRef): string => `@${entity.name}@${entity.key}`;
  const entities: Readonly<Record<string, (context: EntityContext<unknown>) => void>> = {
    [streamsDurable.writerEntity]: streamWriterEntity as (context: EntityContext<unknown>) => void,
    [streamsDurable.ledgerEntity]: streamLedgerEntity as (context: EntityContext<unknown>) => void,
  };
  const deliver = (first: Signal): unknown => {
    const queue = [first];
    let answer: unknown;
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      const { entity, operation, input } = next;
      const body = entities[entity.name];
      if (body === undefined) throw new Error(`no entity ${entity.name} in this fake`);
      const isFirst = next === first;
      const df = {
        entityKey: entity.key,
        operationName: operation,
        getInput: () => input,
        getState: (initial?: () => unknown) => (states.has(id(entity)) ? states.get(id(entity)) : initial?.()),
        setState: (state: unknown) => states.set(id(entity), state),
        signalEntity: (to: EntityRef, op: string, data?: unknown) => queue.push({ entity: to, operation: op, input: data }),
        return: (value: unknown) => {
          if (isFirst) answer = value;
        },
      };
      // Each signal is a batch of its own (one invocation), as the writer's checkpoint rule counts them.
      body({ df, invocationId: randomUUID() } as unknown as EntityContext<unknown>);
    }
    return answer;
  };
  const fake: FakeDurable = {
    failReads: false,
    call: (entity, operation, input) => deliver({ entity, operation, input }),
    signal: (entity, operation, input) => Promise.resolve(void deliver({ entity, operation, input })),
    readState: <T>(entity: EntityRef) =>
      fake.failReads
        ? Promise.reject(new Error('the Durable API is unavailable'))
        : Promise.resolve(states.get(id(entity)) as T | undefined),
    startNew: () => Promise.resolve(),
    getStatus: () => Promise.resolve({ runtimeStatus: 'Running', customStatus: null, output: null }),
    raiseEvent: () => Promise.resolve('delivered' as const),
    managementLinks: () => ({}),
  };
  return fake;
}

/**
 * What the flusher orchestration (shared/streams/flusher.orchestrator.ts) does, played until the
 * writer has nothing left: ask for a plan, open the log or write the batch with the app's own log
 * activities and tell the writer, and on `wait` let its timer fire (plan again at its time).
 */
async function flushWriter(durable: FakeDurable, logs: LogActivities, key: string): Promise<void> {
  const writer = writerEntity(key);
  let now = Date.now();
  for (let round = 0; round < 20; round++) {
    const plan = durable.call(writer, writerOps.plan, { now }) as FlushPlan;
    if (plan.kind === 'open') durable.call(writer, writerOps.opened, { cursor: await logs.open(parseWriterKey(key)) });
    else if (plan.kind === 'flush') durable.call(writer, writerOps.flushed, await logs.append(plan.batch));
    else if (plan.kind === 'wait') now = Math.max(now, plan.until);
    else if (plan.kind !== 'taken') return;
  }
  throw new Error(`the writer ${key} still had work after 20 rounds`);
}

describe('streams telemetry of the appends, and the buffer depth read from the writers’ state', () => {
  const config = loadAppConfig({ AzureWebJobsStorage: runStorage() });
  const storage = storageFor();
  const streamsWith = (memory: ReturnType<typeof memoryTelemetry>, durable: FakeDurable) =>
    createStreams({
      settings: config.streams,
      routesTable: () => storage.table(tables.streamRoutes),
      container: () => storage.container(containers.streams),
      containerName: containers.streams,
      taskHub: config.durable.taskHub,
      ownTypes: new Set(),
      clock: systemClock,
      random: seededRandom(1),
      logger: new MemoryLogger(),
      telemetry: memory.telemetry,
      backoff: occBackoff(config.occ),
      newId: randomUUID,
      // The gauge reads the ledgers with this client when the reader collects (the functions layer hands the latest invocation's).
      recentDurable: () => durable,
    });
  const depthsOf = async (memory: ReturnType<typeof memoryTelemetry>, partition: string): Promise<number[]> =>
    (await memory.collect())
      .points('tallyho.stream.buffer.depth')
      .filter((p) => p.attributes['tallyho.stream.partition'] === partition)
      .map((p) => p.value);

  it('records accepted and duplicate events, and the buffer depth going up with each append', async () => {
    const memory = memoryTelemetry({ callerNames: ['telemetry-*'] });
    const durable = inMemoryDurable();
    const streams = streamsWith(memory, durable);
    const type = `telemetry-${randomUUID().slice(0, 8)}`;

    const first = await streams.service.appendEvents(durable, type, [{ producer: 'p1', seq: 1, data: { n: 1 } }]);
    expect(first).toMatchObject({ accepted: 1, duplicates: 0 });
    expect(await depthsOf(memory, first.partition)).toEqual([1]);

    const second = await streams.service.appendEvents(durable, type, [
      { producer: 'p1', seq: 1, data: { n: 1 } },
      { producer: 'p1', seq: 2, data: { n: 2 } },
      { producer: 'p2', seq: 1, data: { n: 3 } },
    ]);
    expect(second).toMatchObject({ partition: first.partition, accepted: 2, duplicates: 1 });
    expect(await depthsOf(memory, first.partition)).toEqual([3]);

    const collected = await memory.collect();
    const ofType = { 'tallyho.stream.partition': first.partition, 'tallyho.stream.type': type };
    expect(collected.total('tallyho.stream.events.accepted', ofType)).toBe(3);
    expect(collected.total('tallyho.stream.events.duplicates', ofType)).toBe(1);
    await memory.shutdown();
  });

  it('reads the depth from the writer’s state at each collection: N buffered, 0 once flushed, nothing while its ledger cannot be read', async () => {
    const memory = memoryTelemetry();
    const durable = inMemoryDurable();
    const streams = streamsWith(memory, durable);
    const type = `telemetry-${randomUUID().slice(0, 8)}`;
    const events = Array.from({ length: 4 }, (_, i) => ({ producer: 'p1', seq: i + 1, data: { n: i } }));
    const { partition } = await streams.service.appendEvents(durable, type, events);
    const key = writerKey({ partition, resource: type });

    // Read twice with nothing in between: the figure is the state's, not an event's, so it holds.
    expect(await depthsOf(memory, partition)).toEqual([4]);
    expect(await depthsOf(memory, partition)).toEqual([4]);
    const described = await streams.service.describe(durable, type, 'admin');
    expect(described.writer.bufferDepth).toBe(4);

    await flushWriter(durable, streams.logs, key);
    expect((await streams.service.describe(durable, type, 'admin')).writer).toMatchObject({ bufferDepth: 0, flushedThrough: 4 });
    expect(await depthsOf(memory, partition)).toEqual([0]);

    // The ledger cannot be read: the partition reports nothing (never its last value), and again once it can.
    durable.failReads = true;
    expect(await depthsOf(memory, partition)).toEqual([]);
    durable.failReads = false;
    expect(await depthsOf(memory, partition)).toEqual([0]);
    await memory.shutdown();
  });
});
