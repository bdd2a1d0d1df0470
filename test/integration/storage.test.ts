import { loadAppConfig } from '../../shared/app/settings';
import { createStorageClients } from '../../shared/storage/clients';
import { hasStatus, translateStorageError } from '../../shared/storage/errors';

describe('storage clients on Azurite', () => {
  const config = loadAppConfig({ AzureWebJobsStorage: process.env.TEST_STORAGE_CONNECTION });

  it('builds table, queue and blob clients from one connection string and counts every request', async () => {
    const seen: string[] = [];
    const clients = createStorageClients(config.storage, { observe: (service, method) => seen.push(`${service} ${method}`) });
    const table = await clients.table(`t${Date.now()}`);
    await table.createEntity({ partitionKey: 'p', rowKey: 'r', value: 1 });
    const queue = await clients.queue(`q${Date.now()}`);
    await queue.sendMessage('hello');
    const container = await clients.container(`c${Date.now()}`);
    await container.getBlockBlobClient('b').upload('x', 1);
    expect(seen).toEqual(expect.arrayContaining(['table POST', 'queue PUT', 'queue POST', 'blob PUT']));
    expect(seen.filter((s) => s.startsWith('table')).length).toBe(2);
  });

  it('reports a conditional-write loss as a 412 and translates it', async () => {
    const clients = createStorageClients(config.storage);
    const table = await clients.table(`t${Date.now()}x`);
    await table.createEntity({ partitionKey: 'p', rowKey: 'r', value: 1 });
    const first = await table.getEntity('p', 'r');
    await table.updateEntity({ partitionKey: 'p', rowKey: 'r', value: 2 }, 'Replace', { etag: first.etag });
    const lost = await table
      .updateEntity({ partitionKey: 'p', rowKey: 'r', value: 3 }, 'Replace', { etag: first.etag })
      .catch((e: unknown) => e);
    expect(hasStatus(lost, 412)).toBe(true);
    expect(translateStorageError(lost, 'testing').code).toBe('PreconditionFailed');
  });
});
