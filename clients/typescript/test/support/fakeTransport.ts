/** A transport on a fake fetch and a fake clock, with jitter pinned (random() = 0.5). */
import { Transport, type TransportOptions } from '../../src/transport';
import { FakeClock } from './fakeClock';
import { fakeFetch, type Handler } from './fakeFetch';

export function fakeTransport(handler: Handler, options: Partial<TransportOptions> = {}) {
  const clock = new FakeClock();
  const fake = fakeFetch(handler);
  const transport = new Transport({ baseUrl: 'http://host.test/api', fetch: fake.fetch, clock, random: () => 0.5, ...options });
  return { transport, clock, requests: fake.requests };
}
