/**
 * Parity with the real host — entity ids keep the case their caller gives
 * (devhost/docs/real-host.md#entity-ids; azure-functions-durable-js#170): an entity's
 * `signalEntity(new EntityId('Counter', k))` goes to `@Counter@k`, while a client (and an
 * orchestration, whose JS lower-cases the name) addresses `@counter@k`.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- jest.mock factories run before imports
jest.mock('@azure/functions-core', () => require('./support/coreModule').coreApi, { virtual: true });

import { crossCheck, settle, startEngine } from './support/engineHarness';

afterEach(() => {
  expect(crossCheck.take()).toEqual([]);
});

test('real host: an entity signalling a mixed-case entity name does not reach what a client reads in lower case', async () => {
  const h = await startEngine();
  await h.client.signalEntity('counter', 'from', 'relay', JSON.stringify({ target: 'to', amount: 3, name: 'Counter' }));
  await settle(h);
  // The signal ran (the entity function is found whatever the case) on an instance the client never reads.
  expect(h.engine.entities.get('@Counter@to')?.record).toMatchObject({ exists: true, state: '3' });
  expect(h.client.readEntity('counter', 'to')).toEqual({ exists: false, state: undefined });
  expect(h.client.readEntity('Counter', 'to')).toEqual({ exists: false, state: undefined });
});

test('real host: the same signal with the name in lower case reaches the entity a client reads', async () => {
  const h = await startEngine();
  await h.client.signalEntity('counter', 'from', 'relay', JSON.stringify({ target: 'to', amount: 3, name: 'counter' }));
  await settle(h);
  expect(h.client.readEntity('counter', 'to')).toEqual({ exists: true, state: 3 });
});

test('real host: a client addresses the lower-cased name whatever case it sends (the extension lower-cases it)', async () => {
  const h = await startEngine();
  await h.client.signalEntity('COUNTER', 'c', 'add', '4');
  await settle(h);
  expect(h.engine.entities.get('@counter@c')?.record).toMatchObject({ exists: true });
  expect(h.client.readEntity('Counter', 'c')).toEqual({ exists: true, state: 4 });
});
