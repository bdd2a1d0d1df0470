/**
 * A function disabled with `AzureWebJobs.<name>.Disabled` is not served through the Durable extension
 * either: the host (in-process, the fixture app loaded as `startHost` loads any app) refuses a call to
 * a disabled activity with the same text as a call to an unknown one.
 */
import type { DurableClientApi } from '../../durable/client';
import type { RunningHost } from '../../host';
import { finished, startInProcess } from './support/inProcess';

describe('a disabled activity', () => {
  let host: RunningHost;
  let client: DurableClientApi;
  beforeAll(async () => {
    ({ host, client } = await startInProcess({ env: { 'AzureWebJobs.hello.Disabled': 'true' } }));
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
