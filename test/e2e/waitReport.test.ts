/**
 * The e2e waits report stuck orchestrations with their history: a gate scheduled to release in an
 * hour has its generation orchestration waiting on a Durable timer till then, so a wait given up
 * meanwhile (its test ended first: jest's timeout) must name it and show what it did. (Gated runs are
 * rows, not orchestrations: docs/gates.md.)
 */
import { randomBytes } from 'node:crypto';

import { gateInstanceIds } from '../../shared/gates/names';
import { abandonWaits, AbandonedWait, openWaits } from '../support/waits';
import { type E2eHost } from './support/harness';
import { sharedE2eHost } from './support/sharedHost';
import { requestJson } from './support/http';
import { until } from './support/wait';

describe('a wait given up', () => {
  let host: E2eHost;

  beforeAll(async () => {
    host = await sharedE2eHost();
  });
  afterAll(async () => {
    await host?.dispose();
  });

  test('names what it waited for and lists the running orchestrations with their history', async () => {
    const gate = `stuck-${randomBytes(4).toString('hex')}`;
    const releaseAt = new Date(Date.now() + 3600_000);
    releaseAt.setUTCMilliseconds(0);
    const created = await requestJson(host, 'PUT', `/api/gates/${gate}`, { key: 'admin', body: { releaseAt: releaseAt.toISOString() } });
    expect(created.status).toBe(201);
    const instanceId = gateInstanceIds.generation(gate, 1, releaseAt.toISOString());
    // Started with the create; from here on it waits on its timer until the release time.
    await until('the generation orchestration to run', async () => {
      const status = await requestJson<{ runtimeStatus?: string }>(host, 'GET', `/runtime/webhooks/durabletask/instances/${instanceId}`, {
        key: 'admin',
      });
      // The Durable HTTP API answers 202 while the instance runs.
      return (status.status === 200 || status.status === 202) && status.body.runtimeStatus === 'Running' ? true : undefined;
    });

    // What the set-up's afterEach does when a test ends with a wait still open.
    const waiting = until('a release nobody sends', () => Promise.resolve(undefined)).catch((err: unknown) => err);
    expect(openWaits()).toEqual(['a release nobody sends']);
    const [given] = await abandonWaits('this test gives it up', false);
    const failure = await waiting;

    expect(failure).toBeInstanceOf(AbandonedWait);
    expect(failure).toBe(given);
    const message = (failure as Error).message;
    expect(message).toMatch(/^gave up waiting for a release nobody sends: this test gives it up/);
    expect(message).toContain(`${instanceId}: Running`);
    expect(message).toMatch(/ExecutionStarted/);
    expect(openWaits()).toEqual([]);
  });
});
