/**
 * The appends' own streams metrics: accepted and duplicate events, and the buffer depth the writer's
 * ledger showed. They are recorded by the append (shared/streams/append.ts), after the writer (a
 * Durable entity) answered; here the entity runs in a fake Durable runtime (in memory: a signal runs
 * the app's own writer and ledger entity functions at once), and the metrics go to an in-memory
 * reader collected after each append.
 *
 * Why here and not only in the e2e telemetry test: the depth is a last-value gauge exported once a
 * second there, and the append and the flush that follows it both record it — on a quick machine
 * within one export interval, so only the flush's 0 reaches the collector. There, the e2e test checks
 * that the depth ends at 0 after the flush; here, collected between appends, it must have gone up.
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
import { streamsDurable } from '../../../shared/streams/names';
import { streamWriterEntity } from '../../../shared/streams/writer.entity';
import { storageFor } from '../../support/sequences';
import { runStorage } from '../../support/storageAccounts';
import { memoryTelemetry } from '../../support/telemetry';

interface Signal {
  readonly entity: EntityRef;
  readonly operation: string;
  readonly input: unknown;
}

/**
 * A fake of the Durable runtime for the streams' entities: a signal runs the entity function at once,
 * as a batch of its own (and the signals it sends after it, in order: the writer's `settle` included), states are kept in a map; every flusher counts as
 * running. On a host the writer's report reaches the ledger later; the append polls the ledger until
 * its receipt is there, so "at once" is one of the orders a host can produce.
 */
function inMemoryDurable(): DurableClient {
  const states = new Map<string, unknown>();
  const id = (entity: EntityRef): string => `@${entity.name}@${entity.key}`;
  const entities: Readonly<Record<string, (context: EntityContext<unknown>) => void>> = {
    [streamsDurable.writerEntity]: streamWriterEntity as (context: EntityContext<unknown>) => void,
    [streamsDurable.ledgerEntity]: streamLedgerEntity as (context: EntityContext<unknown>) => void,
  };
  const deliver = (first: Signal): void => {
    const queue = [first];
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      const { entity, operation, input } = next;
      const body = entities[entity.name];
      if (body === undefined) throw new Error(`no entity ${entity.name} in this fake`);
      const df = {
        entityKey: entity.key,
        operationName: operation,
        getInput: () => input,
        getState: (initial?: () => unknown) => (states.has(id(entity)) ? states.get(id(entity)) : initial?.()),
        setState: (state: unknown) => states.set(id(entity), state),
        signalEntity: (to: EntityRef, op: string, data?: unknown) => queue.push({ entity: to, operation: op, input: data }),
        return: () => undefined,
      };
      // Each signal is a batch of its own (one invocation), as the writer's checkpoint rule counts them.
      body({ df, invocationId: randomUUID() } as unknown as EntityContext<unknown>);
    }
  };
  return {
    signal: (entity, operation, input) => Promise.resolve(deliver({ entity, operation, input })),
    readState: <T>(entity: EntityRef) => Promise.resolve(states.get(id(entity)) as T | undefined),
    startNew: () => Promise.resolve(),
    getStatus: () => Promise.resolve({ runtimeStatus: 'Running', customStatus: null, output: null }),
    raiseEvent: () => Promise.resolve('delivered' as const),
    managementLinks: () => ({}),
  };
}

describe('streams telemetry of the appends', () => {
  it('records accepted and duplicate events, and the buffer depth going up with each append', async () => {
    const memory = memoryTelemetry({ callerNames: ['telemetry-*'] });
    const config = loadAppConfig({ AzureWebJobsStorage: runStorage() });
    const storage = storageFor();
    const streams = createStreams({
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
    });
    const durable = inMemoryDurable();
    const type = `telemetry-${randomUUID().slice(0, 8)}`;
    const depths = async (partition: string): Promise<number[]> =>
      (await memory.collect())
        .points('tallyho.stream.buffer.depth')
        .filter((p) => p.attributes['tallyho.stream.partition'] === partition)
        .map((p) => p.value);

    const first = await streams.service.appendEvents(durable, type, [{ producer: 'p1', seq: 1, data: { n: 1 } }]);
    expect(first).toMatchObject({ accepted: 1, duplicates: 0 });
    expect(await depths(first.partition)).toEqual([1]);

    const second = await streams.service.appendEvents(durable, type, [
      { producer: 'p1', seq: 1, data: { n: 1 } },
      { producer: 'p1', seq: 2, data: { n: 2 } },
      { producer: 'p2', seq: 1, data: { n: 3 } },
    ]);
    expect(second).toMatchObject({ partition: first.partition, accepted: 2, duplicates: 1 });
    expect(await depths(first.partition)).toEqual([3]);

    const collected = await memory.collect();
    const ofType = { 'tallyho.stream.partition': first.partition, 'tallyho.stream.type': type };
    expect(collected.total('tallyho.stream.events.accepted', ofType)).toBe(3);
    expect(collected.total('tallyho.stream.events.duplicates', ofType)).toBe(1);
    await memory.shutdown();
  });
});
