/**
 * The gate audit log and the enqueue action on Azurite: one row per create/release/reset however often
 * an activity retries, rows in generation order, and an enqueued action message a queue-triggered
 * worker can read.
 */
import { randomUUID } from 'node:crypto';

import { loadAppConfig } from '../../../shared/app/settings';
import { announce, performAction } from '../../../shared/gates/activities';
import { GateAuditLog } from '../../../shared/gates/audit';
import type { AnnounceInput } from '../../../shared/gates/messages';
import type { GateSnapshot } from '../../../shared/gates/operations';
import { GateEventPublisher } from '../../../shared/gates/publisher';
import { GateWatchHub } from '../../../shared/gates/watchHub';
import { systemClock } from '../../../shared/clock';
import { MemoryLogger } from '../../../shared/log';
import { createStorageClients } from '../../../shared/storage/clients';

const storage = createStorageClients(loadAppConfig({ AzureWebJobsStorage: process.env.TEST_STORAGE_CONNECTION }).storage);
const unique = (prefix: string): string => `${prefix}${randomUUID().replace(/-/g, '').slice(0, 12)}`;

function gate(generation: number, released: boolean): GateSnapshot {
  return {
    name: 'launch',
    generation,
    state: released ? 'released' : 'closed',
    createdAt: '2026-01-01T00:00:00.000Z',
    generationStartedAt: `2026-01-0${generation}T00:00:00.000Z`,
    releaseAt: null,
    release: released ? { generation, at: `2026-01-0${generation}T00:30:00.000Z`, by: 'alice', how: 'api' } : null,
    waiters: { waiting: 0, registered: 0, late: 0, proceeded: 0 },
  };
}

describe('gate audit log on Azurite', () => {
  test('create, release and reset each leave one row, in order, however often they are announced', async () => {
    const table = unique('gateaudit');
    const audit = new GateAuditLog(() => storage.table(table));
    const deps = {
      audit,
      hub: new GateWatchHub(() => Promise.resolve(undefined), { intervalMs: 1000, clock: systemClock, logger: new MemoryLogger() }),
      publisher: new GateEventPublisher(() => undefined, new MemoryLogger()),
      now: () => Date.parse('2026-01-09T00:00:00Z'),
    };
    const steps: AnnounceInput[] = [
      { kind: 'reset', gate: gate(2, false), by: 'ops', how: 'api' },
      { kind: 'create', gate: gate(1, false), by: 'ops', how: 'api' },
      { kind: 'release', gate: gate(1, true), by: 'alice', how: 'api', note: 'go' },
      { kind: 'release', gate: gate(2, true), by: 'ops', how: 'schedule' },
    ];
    for (const step of [...steps, ...steps])
      await expect(announce(deps, step)).resolves.toEqual({ audited: true, published: 'notConfigured' });

    const rows = await audit.list('launch', 100);
    expect(rows.map((r) => [r.generation, r.kind, r.by, r.how, r.at])).toEqual([
      [1, 'create', 'ops', 'api', '2026-01-01T00:00:00.000Z'],
      [1, 'release', 'alice', 'api', '2026-01-01T00:30:00.000Z'],
      [2, 'reset', 'ops', 'api', '2026-01-02T00:00:00.000Z'],
      [2, 'release', 'ops', 'schedule', '2026-01-02T00:30:00.000Z'],
    ]);
    expect(rows[1]?.note).toBe('go');
    expect((await audit.list('launch', 2)).map((r) => r.kind)).toEqual(['reset', 'release']);
    expect(await audit.list('other', 100)).toEqual([]);
  });

  test('the enqueue action puts one base64 JSON message for the run on the actions queue', async () => {
    const queueName = unique('gate-actions-');
    const result = await performAction(
      // The enqueue action never reaches the jobs service. (Its queue is the app's gate-actions queue; here a fresh one stands in.)
      {
        queue: () => storage.queue(queueName),
        serviceBusSender: () => undefined,
        webhook: { allowed: [], timeoutMs: 1000, maxResponseBytes: 0, maxRedirects: 0, allowPrivateAddresses: false },
        gates: undefined,
        jobs: undefined,
      },
      { gate: 'launch', generation: 2, runId: 'w7', action: { type: 'enqueue', payload: { shard: 7 } } },
    );
    expect(result).toMatchObject({ type: 'enqueue', queue: queueName, messageId: expect.any(String) });
    const queue = await storage.queue(queueName);
    const { receivedMessageItems } = await queue.receiveMessages({ numberOfMessages: 32 });
    expect(receivedMessageItems.map((m) => JSON.parse(Buffer.from(m.messageText, 'base64').toString('utf8')))).toEqual([
      { gate: 'launch', generation: 2, runId: 'w7', payload: { shard: 7 } },
    ]);
  });
});
