/**
 * The gate audit log and the enqueue action on Azurite: the audit rows are written with the changes
 * they record (in generation order, each once), and an enqueued action message is one a
 * queue-triggered worker can read.
 */
import type { EffectPorts } from '../../../shared/effects/runner';
import { performAction } from '../../../shared/gates/actionRunner';
import { storage, unique, gateWorld } from './world';

describe('gate audit log on Azurite', () => {
  test('create, release and reset each leave one row with the change, in order, with who and how', async () => {
    const world = gateWorld();
    const service = world.instance();
    await service.create('launch', undefined, { by: 'ops' });
    await service.release('launch', { by: 'alice', note: 'go' });
    await service.release('launch', { by: 'again' });
    await service.reset('launch', undefined, { by: 'ops' });
    await service.release('launch', { by: 'bob' });
    const rows = (await world.audit.list('launch', { maxPageSize: 100 })).items;
    expect(rows.map((r) => [r.generation, r.kind, r.by, r.how])).toEqual([
      [1, 'create', 'ops', 'api'],
      [1, 'release', 'alice', 'api'],
      [2, 'reset', 'ops', 'api'],
      [2, 'release', 'bob', 'api'],
    ]);
    expect(rows[1]?.note).toBe('go');
    const gate = await service.describe('launch');
    expect(rows[3]?.at).toBe(gate.release?.at);
    expect(rows[2]?.at).toBe(gate.generationStartedAt);
    const first = await world.audit.list('launch', { maxPageSize: 3 });
    expect(first.items.map((r) => r.kind)).toEqual(['create', 'release', 'reset']);
    const rest = await world.audit.list('launch', { maxPageSize: 3, continuationToken: first.continuationToken });
    expect({ kinds: rest.items.map((r) => r.kind), more: rest.continuationToken }).toEqual({ kinds: ['release'], more: undefined });
    // A token names one gate's log: another gate's refuses it.
    await expect(world.audit.list('other', { maxPageSize: 3, continuationToken: first.continuationToken })).rejects.toMatchObject({
      code: 'ValidationFailed',
    });
    expect(await world.audit.list('other', { maxPageSize: 100 })).toEqual({ items: [], unreadable: [] });
  });

  test('the enqueue action puts one base64 JSON message for the run on the actions queue', async () => {
    const queueName = unique('gate-actions-');
    const ports: EffectPorts = {
      // The enqueue action goes to the gate-actions queue; here a queue of this test's own stands in for it.
      queue: () => storage.queue(queueName),
      serviceBusSender: () => undefined,
      webhook: { allowed: [], timeoutMs: 1000, maxResponseBytes: 0, maxRedirects: 0, allowPrivateAddresses: false },
      gates: undefined,
      jobs: undefined,
    };
    const result = await performAction(ports, {
      gate: 'launch',
      generation: 2,
      runId: 'w7',
      action: { type: 'enqueue', payload: { shard: 7 } },
    });
    expect(result).toMatchObject({ type: 'enqueue', queue: queueName, messageId: expect.any(String) });
    const queue = await storage.queue(queueName);
    const { receivedMessageItems } = await queue.receiveMessages({ numberOfMessages: 32 });
    expect(receivedMessageItems.map((m) => JSON.parse(Buffer.from(m.messageText, 'base64').toString('utf8')))).toEqual([
      { gate: 'launch', generation: 2, runId: 'w7', payload: { shard: 7 } },
    ]);
  });
});
