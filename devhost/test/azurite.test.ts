import { QueueServiceClient } from '@azure/storage-queue';
import { TableServiceClient } from '@azure/data-tables';

import { accountConnectionString, startAzurite } from '../azurite';

describe('startAzurite', () => {
  test('stop() ends Azurite through its own shutdown (exit code 0), not the SIGKILL fallback', async () => {
    const azurite = await startAzurite();
    await azurite.stop();
    expect(azurite.process.signalCode).toBeNull();
    expect(azurite.process.exitCode).toBe(0);
  });

  test('accounts: each is storage of its own beside devstoreaccount1, which still answers', async () => {
    const azurite = await startAzurite({ accounts: ['spare1', 'spare2'] });
    try {
      const spare1 = accountConnectionString(azurite.connectionString, 'spare1');
      expect(spare1).toContain('AccountName=spare1');
      expect(spare1).toMatch(/TableEndpoint=http:\/\/127\.0\.0\.1:\d+\/spare1(;|$)/);
      const tables = (connection: string) => TableServiceClient.fromConnectionString(connection, { allowInsecureConnection: true });
      const queues = (connection: string) => QueueServiceClient.fromConnectionString(connection);
      await tables(spare1).createTable('onlyhere');
      await queues(spare1).createQueue('only-here');
      const names = async (connection: string) => {
        const found: string[] = [];
        for await (const t of tables(connection).listTables()) found.push(t.name ?? '');
        for await (const q of queues(connection).listQueues()) found.push(q.name);
        return found;
      };
      expect(await names(spare1)).toEqual(['onlyhere', 'only-here']);
      expect(await names(accountConnectionString(azurite.connectionString, 'spare2'))).toEqual([]);
      expect(await names(azurite.connectionString)).toEqual([]);
      // An account Azurite was not given is refused, not served from another's data.
      await expect(tables(accountConnectionString(azurite.connectionString, 'nosuch')).createTable('x')).rejects.toThrow();
    } finally {
      await azurite.stop();
    }
  });
});
