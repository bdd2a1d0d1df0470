/**
 * Service Bus paths of schedules: scheduled delivery (the message waits in the broker; its 64-bit
 * sequence number is the cancel handle) and the immediate Service Bus target. Against a fake
 * namespace (sender, broker clock, session receiver) with the index on Azurite; and, when a real
 * namespace or emulator is configured, against it.
 */
import { ServiceBusClient } from '@azure/service-bus';

import { senderDelivery } from '../../../shared/schedules/scheduledDelivery';
import { isAppError } from '../../../shared/errors';
import { problemResult } from '../../../shared/http/responses';
import { appErrorOf } from '../../support/appErrors';
import { scheduleHarness } from '../../support/schedules';
import { until } from '../../support/waits';
import { creatorOf } from '../../../shared/schedules/creator';

/** The creator every schedule of these tests is recorded with. */
const tester = creatorOf('tester', 'function', 'key:shared');

const message = (n: number) => ({ order: 'ORD-42', step: n });

describe('Service Bus scheduled delivery (fake Service Bus)', () => {
  it('hands the message to the broker and stores the 64-bit sequence number as a string before answering', async () => {
    const h = scheduleHarness();
    const at = '2027-01-01T01:00:00.000Z';
    const created = await h.service.create(
      {
        id: 'remind-1',
        at,
        target: { type: 'serviceBus', entity: 'app-orders', message: message(1), sessionId: 'ORD-42', delivery: 'scheduled' },
      },
      tester,
    );
    // Three schedules in, the fake's numbers pass 2^53: a number would have been rounded.
    const second = await h.service.create(
      {
        id: 'remind-2',
        at,
        target: { type: 'serviceBus', entity: 'app-orders', message: message(2), delivery: 'scheduled' },
      },
      tester,
    );
    const third = await h.service.create(
      {
        id: 'remind-3',
        at,
        target: { type: 'serviceBus', entity: 'app-orders', message: message(3), delivery: 'scheduled' },
      },
      tester,
    );
    expect(created).toMatchObject({
      created: true,
      view: {
        id: 'remind-1',
        state: 'active',
        nextFireAt: at,
        delivery: { mode: 'serviceBusScheduled', sequenceNumber: '9007199254740990' },
      },
    });
    expect(second.view.delivery?.sequenceNumber).toBe('9007199254740991');
    expect(third.view.delivery?.sequenceNumber).toBe('9007199254740992');
    expect((await h.table.read('remind-3'))?.sequenceNumber).toBe('9007199254740992');
    expect(h.bus.scheduled.get('9007199254740990')).toMatchObject({
      entity: 'app-orders',
      scheduledFor: Date.parse(at),
      message: {
        messageId: 'remind-1',
        sessionId: 'ORD-42',
        body: message(1),
        applicationProperties: { scheduleId: 'remind-1', scheduledFor: at },
      },
    });
    // No orchestration in this mode.
    expect(h.engine.started.size).toBe(0);
    // Same request again: idempotent, nothing scheduled twice.
    const again = await h.service.create(
      {
        id: 'remind-1',
        at,
        target: { type: 'serviceBus', entity: 'app-orders', message: message(1), sessionId: 'ORD-42', delivery: 'scheduled' },
      },
      tester,
    );
    expect(again).toMatchObject({ created: false, view: { delivery: { sequenceNumber: '9007199254740990' } } });
    expect(h.bus.scheduled.size).toBe(3);
  });

  it('cancels through the stored sequence number, exactly (also beyond 2^53); the message never arrives', async () => {
    const h = scheduleHarness();
    const at = '2027-01-01T00:10:00.000Z';
    for (const n of [1, 2, 3, 4]) {
      await h.service.create(
        {
          id: `c-${n}`,
          at,
          target: { type: 'serviceBus', entity: 'app-orders', message: message(n), delivery: 'scheduled' },
        },
        tester,
      );
    }
    expect((await h.service.cancel('c-4')).state).toBe('cancelled');
    expect(h.bus.cancelled).toEqual(['9007199254740993']);
    expect((await h.service.cancel('c-4')).state).toBe('cancelled'); // idempotent
    expect(h.bus.cancelled).toHaveLength(1);
    await h.clock.advance(10 * 60_000);
    h.bus.tick();
    expect(h.bus.receiveAll('app-orders').map((m) => m.message.messageId)).toEqual(['c-1', 'c-2', 'c-3']);
  });

  it('a cancel after the broker enqueued the message is a 409 and marks it delivered', async () => {
    const h = scheduleHarness();
    await h.service.create(
      {
        id: 'late',
        at: '2027-01-01T00:05:00.000Z',
        target: { type: 'serviceBus', entity: 'app-orders', message: 1, delivery: 'scheduled' },
      },
      tester,
    );
    // The broker's clock is ahead of ours: it has already enqueued the message.
    h.bus.enqueueNow((await h.table.read('late'))?.sequenceNumber ?? '');
    expect(await appErrorOf(h.service.cancel('late'))).toMatchObject({ code: 'Conflict', status: 409 });
    expect((await h.service.get('late', 'admin')).state).toBe('completed');
    // And by our own clock, once its time has passed.
    await h.service.create(
      {
        id: 'past',
        at: '2027-01-01T00:01:00.000Z',
        target: { type: 'serviceBus', entity: 'app-orders', message: 1, delivery: 'scheduled' },
      },
      tester,
    );
    await h.clock.advance(120_000);
    expect(await appErrorOf(h.service.cancel('past'))).toMatchObject({ code: 'Conflict', status: 409 });
  });

  it('per business key (session), a receiver gets the messages in scheduled-time order (fake session receiver)', async () => {
    const h = scheduleHarness();
    const base = Date.parse('2027-01-01T00:00:00Z');
    const plan: [string, string, number][] = [
      ['o42-ship', 'ORD-42', 30],
      ['o42-pack', 'ORD-42', 10],
      ['o7-pack', 'ORD-7', 15],
      ['o42-bill', 'ORD-42', 20],
    ];
    for (const [id, sessionId, minutes] of plan) {
      await h.service.create(
        {
          id,
          at: new Date(base + minutes * 60_000).toISOString(),
          target: { type: 'serviceBus', entity: 'app-fulfilment', message: { id }, sessionId, delivery: 'scheduled' },
        },
        tester,
      );
    }
    await h.service.cancel('o42-bill');
    await h.clock.advance(60 * 60_000);
    h.bus.tick();
    expect(h.bus.receiveSession('app-fulfilment', 'ORD-42').map((m) => m.message.messageId)).toEqual(['o42-pack', 'o42-ship']);
    expect(h.bus.receiveSession('app-fulfilment', 'ORD-7').map((m) => m.message.messageId)).toEqual(['o7-pack']);
  });

  it('when Service Bus refuses, answers 503 and leaves nothing behind; what the SDK said goes to the log, not the answer', async () => {
    const h = scheduleHarness();
    const sdkMessage =
      'connect ECONNREFUSED 10.1.2.3:5671 (amqps://tallyho-prod.servicebus.windows.net/app-orders, TrackingId:6f2c, SystemTracker:gateway)';
    h.bus.failNext = Object.assign(new Error(sdkMessage), { retryable: true, code: 'ServiceCommunicationProblem' });
    const err: unknown = await h.service
      .create(
        {
          id: 'refused',
          at: '2027-01-01T01:00:00Z',
          target: { type: 'serviceBus', entity: 'app-orders', message: 1, delivery: 'scheduled' },
        },
        tester,
      )
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    if (!isAppError(err)) throw new Error('expected an AppError');
    expect({ code: err.code, status: err.status, internal: err.internal }).toEqual({
      code: 'DependencyUnavailable',
      status: 503,
      internal: sdkMessage,
    });
    // The problem document a caller reads.
    const answer = JSON.stringify(problemResult(err).jsonBody);
    expect(answer).toContain('Service Bus did not take the scheduled message; nothing was created');
    expect(answer).not.toMatch(/ECONNREFUSED|10\.1\.2\.3|servicebus\.windows\.net|TrackingId/);
    expect(await h.table.read('refused')).toBeUndefined();
    expect(h.bus.scheduled.size).toBe(0);
  });

  it('a scheduled delivery cannot be paused or triggered (409), and without Service Bus it is a 400', async () => {
    const h = scheduleHarness();
    await h.service.create(
      {
        id: 'sd',
        at: '2027-01-01T01:00:00Z',
        target: { type: 'serviceBus', entity: 'app-orders', message: 1, delivery: 'scheduled' },
      },
      tester,
    );
    expect(await appErrorOf(h.service.pause('sd'))).toMatchObject({ status: 409 });
    expect(await appErrorOf(h.service.trigger('sd'))).toMatchObject({ status: 409 });
    const none = scheduleHarness({ serviceBus: false });
    const problem = await appErrorOf(
      none.service.create(
        {
          id: 'nobus',
          at: '2027-01-01T01:00:00Z',
          target: { type: 'serviceBus', entity: 'app-orders', message: 1, delivery: 'scheduled' },
        },
        tester,
      ),
    );
    expect(problem).toMatchObject({ status: 400, issues: [{ path: 'body.target.type' }] });
    expect(await none.table.read('nobus')).toBeUndefined();
  });
});

describe('the immediate Service Bus target (fake Service Bus)', () => {
  it('sends the message with the run id as message id (duplicate detection drops a retried send) and the session', async () => {
    const h = scheduleHarness();
    await h.service.create(
      {
        id: 'tick',
        cron: '0 * * * * *',
        target: { type: 'serviceBus', entity: 'app-ticks', message: { n: 1 }, sessionId: 'k-1' },
      },
      tester,
    );
    const fire = { at: '2027-01-01T00:01:00.000Z', kind: 'scheduled' as const };
    const outcome = await h.activities.run({
      scheduleId: 'tick',
      runId: 'tick#1',
      fire,
      now: fire.at,
      nextFireAt: '2027-01-01T00:02:00.000Z',
    });
    expect(outcome).toMatchObject({ outcome: 'succeeded', detail: 'sent tick#1' });
    // A retried activity finds the run recorded and does not send again.
    await h.activities.run({ scheduleId: 'tick', runId: 'tick#1', fire, now: fire.at, nextFireAt: null });
    expect(h.bus.receiveSession('app-ticks', 'k-1').map((m) => m.message)).toEqual([
      {
        body: { n: 1 },
        contentType: 'application/json',
        messageId: 'tick#1',
        sessionId: 'k-1',
        applicationProperties: { scheduleId: 'tick', runId: 'tick#1', scheduledFor: fire.at },
      },
    ]);
  });
});

describe('the serviceBus target allow-list (fake Service Bus)', () => {
  const at = '2027-01-01T05:00:00Z';
  const target = (entity: string) => ({ type: 'serviceBus' as const, entity, message: 1 });

  it('by default only app-* entities, in any case (Service Bus names are case-insensitive), and a refusal writes nothing', async () => {
    const h = scheduleHarness();
    const refused = await appErrorOf(h.service.create({ id: 'sb-payroll', at, target: target('payroll') }, tester));
    expect(refused).toMatchObject({ status: 400, code: 'ValidationFailed' });
    expect(refused.issues).toEqual([
      { path: 'body.target.entity', message: 'This entity is not allowed (TALLYHO_SCHEDULES_ALLOWED_SERVICEBUS_ENTITIES)' },
    ]);
    expect(await h.table.read('sb-payroll')).toBeUndefined();
    await h.service.create({ id: 'sb-app', at, target: target('App-Payroll') }, tester);
    expect(await h.table.read('sb-app')).toBeDefined();
  });

  it("never the app's own topics, whatever the allow-list says: a caller could forge gate releases and job completions", async () => {
    const h = scheduleHarness({ env: { TALLYHO_SCHEDULES_ALLOWED_SERVICEBUS_ENTITIES: '*' } });
    for (const entity of ['gate-events', 'Job-Events', 'gate-events/subscriptions/workers']) {
      const refused = await appErrorOf(h.service.create({ id: 'sb-forged', at, target: target(entity) }, tester));
      expect({ entity, issues: refused.issues }).toEqual({
        entity,
        issues: [{ path: 'body.target.entity', message: "Not a target: this entity carries the app's own events" }],
      });
    }
    expect(await h.table.read('sb-forged')).toBeUndefined();
    await h.service.create({ id: 'sb-any', at, target: target('payroll') }, tester);
    expect(await h.table.read('sb-any')).toBeDefined();
  });
});

const realConnection = process.env.SCHEDULES_TEST_SERVICEBUS_CONNECTION;
const realQueue = process.env.SCHEDULES_TEST_SERVICEBUS_QUEUE;
const realTest = realConnection !== undefined && realQueue !== undefined ? test : test.skip;

describe('Service Bus scheduled delivery against a real namespace or emulator', () => {
  realTest(
    `schedules, cancels by sequence number and delivers${realConnection === undefined ? ' [skipped: set SCHEDULES_TEST_SERVICEBUS_CONNECTION and SCHEDULES_TEST_SERVICEBUS_QUEUE (a queue without sessions)]' : ''}`,
    async () => {
      const client = new ServiceBusClient(realConnection as string);
      const sender = client.createSender(realQueue as string);
      const receiver = client.createReceiver(realQueue as string);
      try {
        const delivery = senderDelivery(() => sender);
        const at = new Date(Date.now() + 3000);
        const tag = `tallyho-${Date.now()}`;
        const keep = await delivery.schedule(realQueue as string, { body: { tag, keep: true }, messageId: `${tag}-keep` }, at);
        const drop = await delivery.schedule(realQueue as string, { body: { tag, keep: false }, messageId: `${tag}-drop` }, at);
        expect(keep).toMatch(/^\d+$/);
        expect(BigInt(drop)).toBeGreaterThan(BigInt(keep));
        expect(await delivery.cancel(realQueue as string, drop)).toBe('cancelled');
        const got: unknown[] = [];
        // Until a message of this run arrives (no budget of its own: test/support/waits.ts).
        await until('a scheduled message of this run', async () => {
          for (const m of await receiver.receiveMessages(10, { maxWaitTimeInMs: 2000 })) {
            await receiver.completeMessage(m);
            if ((m.body as { tag?: string }).tag === tag) got.push(m.messageId);
          }
          return got.length > 0 ? true : undefined;
        });
        expect(got).toEqual([`${tag}-keep`]);
        expect(await delivery.cancel(realQueue as string, keep)).toBe('gone');
      } finally {
        await receiver.close();
        await sender.close();
        await client.close();
      }
    },
  );
});
