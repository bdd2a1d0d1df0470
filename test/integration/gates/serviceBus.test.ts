/**
 * Opt-in: publishes a gate release to a real Service Bus namespace (or the emulator) and receives it
 * from a subscription. Set TALLYHO_TEST_SERVICE_BUS to a connection string and
 * TALLYHO_TEST_SERVICE_BUS_SUBSCRIPTION to an existing subscription of the `gate-events` topic.
 */
import { randomBytes } from 'node:crypto';

import { ServiceBusClient } from '@azure/service-bus';

import type { AnnounceInput } from '../../../shared/gates/messages';
import { GateEventPublisher } from '../../../shared/gates/publisher';
import { MemoryLogger } from '../../../shared/log';
import { serviceBusEntities } from '../../../shared/resources';
import { until } from '../../support/waits';

const connection = process.env.TALLYHO_TEST_SERVICE_BUS;
const subscription = process.env.TALLYHO_TEST_SERVICE_BUS_SUBSCRIPTION;
const configured = connection !== undefined && connection !== '' && subscription !== undefined && subscription !== '';
const name = 'a release published to gate-events is received by a subscriber with its gate and generation';
const maybe = configured ? test : test.skip;

describe('gate events on a real Service Bus', () => {
  maybe(
    configured ? name : `${name} [skipped: set TALLYHO_TEST_SERVICE_BUS and TALLYHO_TEST_SERVICE_BUS_SUBSCRIPTION to run it]`,
    async () => {
      const client = new ServiceBusClient(connection as string);
      const topic = serviceBusEntities.topics.gateEvents;
      const gate = `sb-${randomBytes(4).toString('hex')}`;
      const announcement: AnnounceInput = {
        kind: 'release',
        by: 'test',
        how: 'api',
        gate: {
          name: gate,
          generation: 1,
          state: 'released',
          createdAt: new Date().toISOString(),
          generationStartedAt: new Date().toISOString(),
          releaseAt: null,
          release: { generation: 1, at: new Date().toISOString(), by: 'test', how: 'api' },
          waiters: { waiting: 0, registered: 0, late: 0, proceeded: 0 },
        },
      };
      const receiver = client.createReceiver(topic, subscription as string);
      const sender = client.createSender(topic);
      try {
        const publisher = new GateEventPublisher(() => sender, new MemoryLogger());
        await expect(publisher.publish(announcement)).resolves.toBe('published');
        let found: { gate?: unknown; generation?: unknown } | undefined;
        // Until the announcement arrives (no budget of its own: test/support/waits.ts).
        await until('the gate announcement', async () => {
          for (const message of await receiver.receiveMessages(10, { maxWaitTimeInMs: 5000 })) {
            await receiver.completeMessage(message);
            if (message.applicationProperties?.gate === gate) found = message.body as typeof found;
          }
          return found;
        });
        expect(found).toMatchObject({ type: 'GateReleased', gate, generation: 1 });
      } finally {
        await sender.close();
        await receiver.close();
        await client.close();
      }
    },
  );
});
