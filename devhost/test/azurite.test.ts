import { startAzurite } from '../azurite';

describe('startAzurite', () => {
  test('stop() ends Azurite through its own shutdown (exit code 0), not the SIGKILL fallback', async () => {
    const azurite = await startAzurite();
    await azurite.stop();
    expect(azurite.process.signalCode).toBeNull();
    expect(azurite.process.exitCode).toBe(0);
  });
});
