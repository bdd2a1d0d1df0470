import { BlobServiceClient } from '@azure/storage-blob';
import { QueueServiceClient } from '@azure/storage-queue';

import type { RunningHost } from '../host';
import { until as untilCondition } from '../../test/support/waits';
import { startFixture, storageConnection, uniqueName } from './support';

interface State {
  record: { message: unknown; metadata: Record<string, unknown> }[];
  fail: { dequeueCount: number; at: number }[];
  flaky: { dequeueCount: number; at: number }[];
  slow: unknown[];
  maxRunning: number;
}

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

/** Reads until `done` holds (no budget of its own: test/support/waits.ts); given up, it reports the last value. */
function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  let last: T | undefined;
  return untilCondition(
    'the fixture state to reach what the test waits for',
    async () => {
      const value = await read();
      last = value;
      return done(value) ? value : undefined;
    },
    { report: () => `last value: ${JSON.stringify(last)}` },
  );
}

describe('storage-queue triggers on Azurite', () => {
  const queues = {
    RECORD_QUEUE: uniqueName('record'),
    FAIL_QUEUE: uniqueName('fail'),
    FLAKY_QUEUE: uniqueName('flaky'),
    SLOW_QUEUE: uniqueName('slow'),
  };
  const service = QueueServiceClient.fromConnectionString(storageConnection());
  let host: RunningHost;
  const state = async (): Promise<State> => (await (await fetch(`${host.baseUrl}/api/state`)).json()) as State;

  beforeAll(async () => {
    host = await startFixture('queues', { env: queues });
  });
  afterAll(async () => {
    await host.stop();
    await Promise.all(
      Object.values(queues)
        .flatMap((q) => [q, `${q}-poison`])
        .map((q) => service.getQueueClient(q).deleteIfExists()),
    );
  });

  test('a base64 message is decoded, JSON-looking bodies are parsed, and trigger metadata is complete', async () => {
    const sent = await service.getQueueClient(queues.RECORD_QUEUE).sendMessage(b64('{"order":42}'));
    const s = await until(state, (v) => v.record.length >= 1);
    const first = s.record[0] as State['record'][number];
    expect(first.message).toEqual({ order: 42 });
    expect(first.metadata).toMatchObject({
      id: sent.messageId,
      dequeueCount: 1,
      queueTrigger: { order: 42 },
      popReceipt: expect.any(String),
    });
    for (const key of ['insertionTime', 'expirationTime', 'nextVisibleTime']) expect(Date.parse(String(first.metadata[key]))).not.toBeNaN();
  });

  test('admin "run now" on a queue function goes the way of a polled message: parsed body, complete metadata', async () => {
    const res = await fetch(`${host.baseUrl}/admin/functions/record`, {
      method: 'POST',
      headers: { 'x-functions-key': host.masterKey },
      body: JSON.stringify({ input: '{"order":7}' }),
    });
    expect(res.status).toBe(202);
    const s = await until(state, (v) => v.record.some((r) => (r.message as { order?: number }).order === 7));
    const run = s.record.find((r) => (r.message as { order?: number }).order === 7) as State['record'][number];
    expect(run.metadata).toMatchObject({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), dequeueCount: 1, queueTrigger: { order: 7 } });
    for (const key of ['insertionTime', 'expirationTime', 'nextVisibleTime']) expect(Date.parse(String(run.metadata[key]))).not.toBeNaN();
  });

  test('a body that is not base64 goes to the poison queue without running', async () => {
    const poison = service.getQueueClient(`${queues.RECORD_QUEUE}-poison`);
    await service.getQueueClient(queues.RECORD_QUEUE).sendMessage('not base64!');
    const peeked = await until(
      async () => ((await poison.exists()) ? (await poison.peekMessages({ numberOfMessages: 5 })).peekedMessageItems : []),
      (items) => items.length >= 1,
    );
    expect(peeked.map((m) => m.messageText)).toEqual(['not base64!']);
    expect((await state()).record.some((r) => r.message === 'not base64!')).toBe(false);
  });

  test('after maxDequeueCount failures the message moves to <queue>-poison, same encoding; retries wait visibilityTimeout', async () => {
    await service.getQueueClient(queues.FAIL_QUEUE).sendMessage(b64('{"doomed":true}'));
    const poison = service.getQueueClient(`${queues.FAIL_QUEUE}-poison`);
    const peeked = await until(
      async () => ((await poison.exists()) ? (await poison.peekMessages()).peekedMessageItems : []),
      (items) => items.length >= 1,
    );
    expect(peeked[0]?.messageText).toBe(b64('{"doomed":true}'));
    const attempts = (await state()).fail;
    expect(attempts.map((a) => a.dequeueCount)).toEqual([1, 2, 3]);
    for (let i = 1; i < attempts.length; i++)
      expect((attempts[i] as { at: number }).at - (attempts[i - 1] as { at: number }).at).toBeGreaterThanOrEqual(900);
    const left = await service.getQueueClient(queues.FAIL_QUEUE).peekMessages();
    expect(left.peekedMessageItems).toHaveLength(0);
  });

  test('a failed message becomes visible again after visibilityTimeout and then succeeds', async () => {
    await service.getQueueClient(queues.FLAKY_QUEUE).sendMessage(b64('"once"'));
    const s = await until(state, (v) => v.flaky.length >= 2);
    const [first, second] = s.flaky as [{ at: number; dequeueCount: number }, { at: number; dequeueCount: number }];
    expect([first.dequeueCount, second.dequeueCount]).toEqual([1, 2]);
    expect(second.at - first.at).toBeGreaterThanOrEqual(900);
    // Deleted once it succeeded: the queue empties (a wait on that, not on a fixed time).
    await until(
      () => service.getQueueClient(queues.FLAKY_QUEUE).peekMessages(),
      (peeked) => peeked.peekedMessageItems.length === 0,
    );
  });

  test('the next batch starts once running drops to newBatchThreshold, never past batchSize + threshold (4 + 2)', async () => {
    const queue = service.getQueueClient(queues.SLOW_QUEUE);
    // In order, so each batch of 4 holds two long (even) and two short (odd) messages.
    for (let i = 0; i < 14; i++) await queue.sendMessage(b64(String(i)));
    const s = await until(state, (v) => v.slow.length >= 14);
    // A host that waited for a whole batch would peak at 4; one that ignored the threshold, above 6.
    // (Exactly 6 needs the next batch to arrive whole, which the polling may split.)
    expect(s.maxRunning).toBeGreaterThanOrEqual(5);
    expect(s.maxRunning).toBeLessThanOrEqual(6);
    expect([...(s.slow as number[])].sort((a, b) => a - b)).toEqual(Array.from({ length: 14 }, (_, i) => i));
  });

  // That the write wakes the listener at once, instead of leaving it to its back-off, is proven where
  // the back-off can be seen without a clock: queuePolling.test.ts.
  test('a queue output binding writes base64 that the listener on that queue decodes and runs', async () => {
    const before = (await state()).record.length;
    const res = await fetch(`${host.baseUrl}/api/send`, { method: 'POST', body: JSON.stringify({ via: 'output' }) });
    expect(res.status).toBe(202);
    const s = await until(state, (v) => v.record.length > before);
    expect(s.record[s.record.length - 1]?.message).toEqual({ via: 'output' });
  });
});

describe('queue output, blob output and blob input bindings (basic fixture)', () => {
  const outQueue = uniqueName('out');
  const outContainer = uniqueName('out');
  let host: RunningHost;

  beforeAll(async () => {
    host = await startFixture('basic', { env: { OUT_QUEUE: outQueue, OUT_CONTAINER: outContainer } });
  });
  afterAll(async () => {
    await host.stop();
    await QueueServiceClient.fromConnectionString(storageConnection()).getQueueClient(outQueue).deleteIfExists();
    await BlobServiceClient.fromConnectionString(storageConnection()).getContainerClient(outContainer).deleteIfExists();
  });

  test('an array writes one message each (base64); the blob path resolves {tag} and {rand-guid}', async () => {
    const res = await fetch(`${host.baseUrl}/api/outputs/t1`, { method: 'POST', body: JSON.stringify({ n: 1 }) });
    expect(res.status).toBe(202);
    const queue = QueueServiceClient.fromConnectionString(storageConnection()).getQueueClient(outQueue);
    const messages = (await queue.peekMessages({ numberOfMessages: 10 })).peekedMessageItems.map((m) =>
      Buffer.from(m.messageText, 'base64').toString('utf8'),
    );
    expect(messages).toEqual(['{"n":1}', 'plain text']);
    const container = BlobServiceClient.fromConnectionString(storageConnection()).getContainerClient(outContainer);
    const blobs: string[] = [];
    for await (const blob of container.listBlobsFlat()) blobs.push(blob.name);
    expect(blobs).toHaveLength(1);
    expect(blobs[0]).toMatch(/^t1-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.json$/);
    const content = (await container.getBlobClient(blobs[0] as string).downloadToBuffer()).toString('utf8');
    expect(JSON.parse(content)).toEqual({ tag: 't1', body: { n: 1 } });
    // Blob input reads it back (route parameter in the path); a missing blob binds as null.
    const read = await fetch(`${host.baseUrl}/api/blob/${blobs[0] as string}`);
    expect(JSON.parse(await read.text())).toEqual({ tag: 't1', body: { n: 1 } });
    expect((await fetch(`${host.baseUrl}/api/blob/missing.json`)).status).toBe(404);
  });
});

describe('messageEncoding none', () => {
  const queue = uniqueName('plain');
  let host: RunningHost;

  beforeAll(async () => {
    host = await startFixture('queues', {
      env: {
        RECORD_QUEUE: queue,
        FAIL_QUEUE: uniqueName('unused'),
        FLAKY_QUEUE: uniqueName('unused'),
        SLOW_QUEUE: uniqueName('unused'),
        AzureFunctionsJobHost__extensions__queues__messageEncoding: 'none',
      },
    });
  });
  afterAll(async () => {
    await host.stop();
  });

  test('messages are read as sent, without base64', async () => {
    await QueueServiceClient.fromConnectionString(storageConnection()).getQueueClient(queue).sendMessage('plain words');
    const s = await until(
      async () => (await (await fetch(`${host.baseUrl}/api/state`)).json()) as State,
      (v) => v.record.length >= 1,
    );
    expect(s.record[0]?.message).toBe('plain words');
  });
});
