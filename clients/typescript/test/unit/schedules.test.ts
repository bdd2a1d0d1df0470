import { Schedules } from '../../src/schedules';
import { fakeTransport } from '../support/fakeTransport';
import { json } from '../support/fakeFetch';

const view = { id: 's', state: 'pending', runCount: 0, runs: [], pendingTriggers: 0 };

describe('Schedules', () => {
  test('create sends a gate release to the admin-level route with the admin key, anything else to the function-level one', async () => {
    const { transport, requests } = fakeTransport(() => json(201, view), { functionKey: 'fn-key', adminKey: 'admin-key' });
    const schedules = new Schedules(transport);
    await schedules.create({ id: 'open', at: '2030-01-15T09:00:00Z', target: { type: 'gateRelease', gate: 'launch' } });
    await schedules.create({
      id: 'remind',
      at: '2030-01-15T09:00:00Z',
      target: { type: 'queueMessage', queue: 'app-reminders', message: 'hi' },
    });
    expect(requests.map((r) => [r.path, r.headers['x-functions-key']])).toEqual([
      ['schedules/privileged', 'admin-key'],
      ['schedules', 'fn-key'],
    ]);
  });

  test('get reads what the function key may see, or everything through the admin-level route with privileged', async () => {
    const { transport, requests } = fakeTransport(() => json(200, view), { functionKey: 'fn-key', adminKey: 'admin-key' });
    const schedules = new Schedules(transport);
    await schedules.get('nightly');
    await schedules.get('nightly', { privileged: true });
    expect(requests.map((r) => [r.method, r.path, r.headers['x-functions-key']])).toEqual([
      ['GET', 'schedules/nightly', 'fn-key'],
      ['GET', 'schedules/nightly/privileged', 'admin-key'],
    ]);
  });
});
