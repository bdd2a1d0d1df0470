/**
 * The e2e waits report stuck orchestrations with their history: a gated run on a closed gate is
 * an orchestration that waits for good, so a wait on it that runs out must name it and show what it did.
 */
import { randomBytes } from 'node:crypto';

import { type E2eHost, startE2eHost } from './support/harness';
import { requestJson } from './support/http';
import { until } from './support/wait';

describe('a wait that runs out', () => {
  let host: E2eHost;

  beforeAll(async () => {
    host = await startE2eHost();
  });
  afterAll(async () => {
    await host.stop();
  });

  test('names what it waited for and lists the running orchestrations with their history', async () => {
    const gate = `stuck-${randomBytes(4).toString('hex')}`;
    expect((await requestJson(host, 'PUT', `/api/gates/${gate}`, { key: 'admin', body: {} })).status).toBe(201);
    const run = await requestJson<{ id: string }>(host, 'POST', `/api/gates/${gate}/runs`, { body: { runId: 'w1' } });
    expect(run.status).toBe(202);
    // Registered with the gate and parked: from here on nothing moves until a release.
    await until('the run to register', async () => {
      const state = await requestJson<{ waiters: { registered: number } }>(host, 'GET', `/api/gates/${gate}`);
      return state.body.waiters.registered === 1 ? true : undefined;
    });

    const failure = await until('a release nobody sends', () => Promise.resolve(undefined), 300).catch((err: unknown) => err);

    expect(failure).toBeInstanceOf(Error);
    const message = (failure as Error).message;
    expect(message).toMatch(/^timed out after 300 ms waiting for a release nobody sends/);
    expect(message).toContain(`${run.body.id}: Running`);
    expect(message).toMatch(/ExecutionStarted/);
  });
});
