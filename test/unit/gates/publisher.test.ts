/** Publishing gate events to the gate-events topic, against a fake Service Bus sender. */
import type { ServiceBusMessage } from '@azure/service-bus';

import type { AnnounceInput } from '../../../shared/gates/messages';
import { GateEventPublisher, gateEventMessage } from '../../../shared/gates/publisher';
import { MemoryLogger } from '../../../shared/log';

const release: AnnounceInput = {
  kind: 'release',
  by: 'alice',
  how: 'api',
  gate: {
    name: 'launch',
    generation: 3,
    state: 'released',
    createdAt: '2026-01-01T00:00:00.000Z',
    generationStartedAt: '2026-01-02T00:00:00.000Z',
    releaseAt: null,
    release: { generation: 3, at: '2026-01-02T00:05:00.000Z', by: 'alice', how: 'api' },
    waiters: { waiting: 0, registered: 10, late: 0, proceeded: 0 },
  },
};

describe('gate event publisher (fake Service Bus sender)', () => {
  test('a release is one message with a dedup id, a subject and the gate as a filterable property', async () => {
    const sent: ServiceBusMessage[] = [];
    const publisher = new GateEventPublisher(() => ({ sendMessages: (m) => Promise.resolve(void sent.push(m)) }), new MemoryLogger());
    await expect(publisher.publish(release)).resolves.toBe('published');
    expect(sent).toEqual([
      {
        messageId: 'launch:3:release',
        subject: 'GateReleased',
        contentType: 'application/json',
        applicationProperties: { gate: 'launch', generation: 3, type: 'GateReleased' },
        body: {
          type: 'GateReleased',
          gate: 'launch',
          generation: 3,
          state: 'released',
          releaseAt: null,
          release: { generation: 3, at: '2026-01-02T00:05:00.000Z', by: 'alice', how: 'api' },
          by: 'alice',
          how: 'api',
        },
      },
    ]);
  });

  test('a reset is its own message id, so it is not taken for a duplicate of the release', () => {
    expect(gateEventMessage({ ...release, kind: 'reset' })).toMatchObject({ messageId: 'launch:3:reset', subject: 'GateReset' });
  });

  test('without Service Bus nothing is sent', async () => {
    const publisher = new GateEventPublisher(() => undefined, new MemoryLogger());
    await expect(publisher.publish(release)).resolves.toBe('notConfigured');
  });

  test('a send failure is logged and reported, not thrown (the Durable push must not wait on Service Bus)', async () => {
    const logger = new MemoryLogger();
    const publisher = new GateEventPublisher(() => ({ sendMessages: () => Promise.reject(new Error('namespace down')) }), logger);
    await expect(publisher.publish(release)).resolves.toBe('failed');
    expect(logger.events('gates.publish.failed')).toEqual([
      expect.objectContaining({ gate: 'launch', generation: 3, kind: 'release', error: expect.any(Error) }),
    ]);
  });
});
