/**
 * Storage accounts behind binding `connection` settings, resolved like the host does: the setting
 * named by `connection` (default `AzureWebJobsStorage`), else `AzureWebJobs<connection>`. Its value
 * is a connection string (`UseDevelopmentStorage=true` means Azurite on its default ports).
 * Identity-based connections (`<name>__accountName`, `__queueServiceUri`, …) need Azure AD, which the
 * devhost does not offer: they fail with a message that says so.
 */
import { BlobServiceClient, type ContainerClient } from '@azure/storage-blob';
import { type QueueClient, QueueServiceClient } from '@azure/storage-queue';

import { getSetting, type Settings } from '../app/settings';
import { DevhostError } from '../errors';

const defaultConnection = 'AzureWebJobsStorage';

function resolveConnectionString(settings: Settings, connection: string | undefined): string {
  const name = connection === undefined || connection.trim() === '' ? defaultConnection : connection.trim();
  const value = getSetting(settings, name) ?? getSetting(settings, `AzureWebJobs${name}`);
  if (value !== undefined && value.trim() !== '') return value.trim();
  const identityKeys = ['accountName', 'queueServiceUri', 'blobServiceUri', 'tableServiceUri', 'serviceUri', 'credential'];
  const identity = identityKeys.map((k) => `${name}__${k}`).find((k) => getSetting(settings, k) !== undefined);
  if (identity !== undefined) {
    throw new DevhostError(
      'ConnectionInvalid',
      `Connection "${name}" is identity-based (${identity}); the devhost cannot obtain Azure AD tokens. ` +
        `Set ${name} to a connection string (UseDevelopmentStorage=true for Azurite) to run locally.`,
    );
  }
  throw new DevhostError(
    'ConnectionInvalid',
    `Connection "${name}" is not set: add ${name} (a storage connection string) to local.settings.json Values or the environment.`,
  );
}

/** Builds SDK clients once per connection string and creates each queue/container once. */
export class StorageClients {
  private readonly queueServices = new Map<string, QueueServiceClient>();
  private readonly blobServices = new Map<string, BlobServiceClient>();
  private readonly ensured = new Map<string, Promise<void>>();

  constructor(private readonly settings: Settings) {}

  connectionString(connection: string | undefined): string {
    return resolveConnectionString(this.settings, connection);
  }

  queueService(connection: string | undefined): QueueServiceClient {
    const cs = this.connectionString(connection);
    let client = this.queueServices.get(cs);
    if (client === undefined) {
      client = QueueServiceClient.fromConnectionString(cs);
      this.queueServices.set(cs, client);
    }
    return client;
  }

  blobService(connection: string | undefined): BlobServiceClient {
    const cs = this.connectionString(connection);
    let client = this.blobServices.get(cs);
    if (client === undefined) {
      client = BlobServiceClient.fromConnectionString(cs);
      this.blobServices.set(cs, client);
    }
    return client;
  }

  /** A queue client whose queue exists (created on first use, as the host's output binding does). */
  async queue(connection: string | undefined, name: string): Promise<QueueClient> {
    const client = this.queueService(connection).getQueueClient(name);
    await this.once(`q|${client.url}`, async () => {
      await client.createIfNotExists();
    });
    return client;
  }

  async container(connection: string | undefined, name: string): Promise<ContainerClient> {
    const client = this.blobService(connection).getContainerClient(name);
    await this.once(`c|${client.url}`, async () => {
      await client.createIfNotExists();
    });
    return client;
  }

  private once(key: string, create: () => Promise<void>): Promise<void> {
    let pending = this.ensured.get(key);
    if (pending === undefined) {
      pending = create();
      this.ensured.set(key, pending);
      pending.catch(() => this.ensured.delete(key));
    }
    return pending;
  }
}
