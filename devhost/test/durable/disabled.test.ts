/**
 * A function disabled with `AzureWebJobs.<name>.Disabled` is not served through the Durable extension
 * either: the host (in-process, the fixture app loaded as `startHost` loads any app) refuses a call to
 * a disabled activity with the same text as a call to an unknown one.
 */
import { join } from 'node:path';

import { DurableClientApi } from '../../durable/client';
import { DurableExtension } from '../../durable/extension';
import { MemoryStore } from '../../durable/memoryStore';
import type { StatusPayload } from '../../durable/status';
import { type RunningHost, startHost } from '../../host';

const appRoot = join(__dirname, 'fixtures', 'durable-app');

async function finished(client: DurableClientApi, id: string): Promise<StatusPayload> {
  for (let i = 0; i < 500; i++) {
    const status = client.status(id, { showHistory: false });
    if (status !== undefined && ['Completed', 'Failed', 'Terminated'].includes(status.runtimeStatus)) return status;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`${id} did not finish`);
}

describe('a disabled activity', () => {
  let host: RunningHost;
  let client: DurableClientApi;
  beforeAll(async () => {
    const durable = new DurableExtension({ store: new MemoryStore() });
    host = await startHost({
      appRoot,
      port: 0,
      quiet: true,
      log: () => undefined,
      extensions: [durable],
      env: { 'AzureWebJobs.hello.Disabled': 'true' },
    });
    const engine = durable.running;
    if (engine === undefined) throw new Error('the durable engine did not start');
    client = new DurableClientApi(engine);
  });
  afterAll(async () => {
    await host.stop();
  });

  test('is refused like an unknown one, and is not listed among the known activities', async () => {
    const known = "The following are the known activity functions: 'double', 'echo', 'boom', 'flaky', 'tracked', 'raiseVia'.";
    const disabled = await finished(client, await client.start('sequence', { input: JSON.stringify(['Oslo']) }));
    expect(disabled.runtimeStatus).toBe('Failed');
    expect(disabled.output).toBe(
      `The function 'hello' doesn't exist, is disabled, or is not an activity function. Additional info: ${known}`,
    );
    const unknown = await finished(client, await client.start('unknownActivity'));
    expect(unknown.output).toBe(
      `The function 'noSuchActivity' doesn't exist, is disabled, or is not an activity function. Additional info: ${known}`,
    );
  });

  test('while the activities that are not disabled still run', async () => {
    const status = await finished(client, await client.start('longSequence', { input: '3' }));
    expect(status.runtimeStatus).toBe('Completed');
    expect(status.output).toBe(6);
  });
});
