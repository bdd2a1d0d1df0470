/**
 * Idempotency keys expire: on Azurite, with the store's clock a ManualClock, a key is replayed up to
 * its TTL and treated as new from then on (the work runs again and the new answer is kept).
 */
import { randomUUID } from 'node:crypto';

import type { TableClient } from '@azure/data-tables';

import { ManualClock } from '../../shared/clock';
import { loadAppConfig } from '../../shared/app/settings';
import { IdempotencyStore } from '../../shared/idempotency';
import { createStorageClients } from '../../shared/storage/clients';

const ttlSeconds = 60;

describe('IdempotencyStore expiry on Azurite', () => {
  const clients = createStorageClients(loadAppConfig({ AzureWebJobsStorage: process.env.TEST_STORAGE_CONNECTION }).storage);
  let table: TableClient;
  let clock: ManualClock;
  let store: IdempotencyStore;
  let computed: number;
  const compute = (): Promise<{ answer: number }> => Promise.resolve({ answer: ++computed });

  beforeEach(async () => {
    table = await clients.table(`idem${randomUUID().replace(/-/g, '').slice(0, 16)}`);
    clock = new ManualClock();
    store = new IdempotencyStore(() => Promise.resolve(table), clock, ttlSeconds);
    computed = 0;
  });

  afterEach(async () => {
    await table.deleteTable();
  });

  async function rows(): Promise<{ partitionKey: string; expiresAt: number }[]> {
    const found: { partitionKey: string; expiresAt: number }[] = [];
    for await (const e of table.listEntities<{ expiresAt: number }>())
      found.push({ partitionKey: e.partitionKey!, expiresAt: e.expiresAt });
    return found;
  }

  it('replays the stored answer until the TTL ends, then runs the work again and keeps the new answer', async () => {
    const start = clock.now();
    expect(await store.run('seq:orders', 'batch-17', compute)).toEqual({ answer: 1 });
    expect(await rows()).toEqual([{ partitionKey: 'seq:orders', expiresAt: start + ttlSeconds * 1000 }]);

    await clock.advance(ttlSeconds * 1000 - 1);
    expect(await store.run('seq:orders', 'batch-17', compute)).toEqual({ answer: 1 });
    expect(computed).toBe(1);

    await clock.advance(1);
    expect(await store.run('seq:orders', 'batch-17', compute)).toEqual({ answer: 2 });
    expect(computed).toBe(2);
    // The expired row was replaced, not duplicated, and its new expiry counts from now.
    expect(await rows()).toEqual([{ partitionKey: 'seq:orders', expiresAt: clock.now() + ttlSeconds * 1000 }]);

    await clock.advance(ttlSeconds * 1000 - 1);
    expect(await store.run('seq:orders', 'batch-17', compute)).toEqual({ answer: 2 });
    expect(computed).toBe(2);
  });

  it('an expired key of one scope leaves a live key of another scope alone', async () => {
    await store.run('seq:a', 'k', compute);
    await clock.advance(30_000);
    await store.run('seq:b', 'k', compute);
    await clock.advance(30_000);
    expect(await store.run('seq:a', 'k', compute)).toEqual({ answer: 3 });
    expect(await store.run('seq:b', 'k', compute)).toEqual({ answer: 2 });
    expect(computed).toBe(3);
  });
});
