/**
 * The connection settings `loadConfig` reads: the same names the Functions host reads for bindings
 * (a connection string, or identity-based `<Name>__*` settings), and what the storage clients make
 * of them. Nothing here touches the network.
 */
import { DefaultAzureCredential, ManagedIdentityCredential } from '@azure/identity';

import { type AppConfig as Config, loadAppConfig as loadConfig } from '../../shared/app/settings';
import { AppError } from '../../shared/errors';
import { createStorageClients, tokenCredentialFor } from '../../shared/storage/clients';

type Env = Record<string, string>;

const clientId = '00000000-0000-4000-8000-0000000000c1';

function configError(env: Env): AppError {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('loadConfig accepted the settings');
}

function storageOf(env: Env): Config['storage'] {
  return loadConfig(env).storage;
}

describe('storage connection (AzureWebJobsStorage)', () => {
  it('__accountName alone gives the three https endpoints of that account, identity credential', () => {
    expect(storageOf({ AzureWebJobsStorage__accountName: 'tallyhoprod' })).toEqual({
      setting: 'AzureWebJobsStorage',
      accountName: 'tallyhoprod',
      endpoints: {
        blob: 'https://tallyhoprod.blob.core.windows.net',
        queue: 'https://tallyhoprod.queue.core.windows.net',
        table: 'https://tallyhoprod.table.core.windows.net',
      },
      credential: { kind: 'identity', managedIdentity: false, clientId: undefined },
    });
  });

  it('the three __<service>ServiceUri settings are used as given (trailing slash dropped), account name from the host', () => {
    const storage = storageOf({
      AzureWebJobsStorage__blobServiceUri: 'https://acct1.blob.core.usgovcloudapi.net/',
      AzureWebJobsStorage__queueServiceUri: 'https://acct1.queue.core.usgovcloudapi.net',
      AzureWebJobsStorage__tableServiceUri: 'https://acct1.table.core.usgovcloudapi.net',
    });
    expect(storage.endpoints).toEqual({
      blob: 'https://acct1.blob.core.usgovcloudapi.net',
      queue: 'https://acct1.queue.core.usgovcloudapi.net',
      table: 'https://acct1.table.core.usgovcloudapi.net',
    });
    expect(storage.accountName).toBe('acct1');
    expect(storage.credential.kind).toBe('identity');
  });

  it('a service URI overrides the endpoint __accountName would give', () => {
    const storage = storageOf({
      AzureWebJobsStorage__accountName: 'tallyhoprod',
      AzureWebJobsStorage__tableServiceUri: 'https://tables.example.net',
    });
    expect(storage.endpoints.table).toBe('https://tables.example.net');
    expect(storage.endpoints.blob).toBe('https://tallyhoprod.blob.core.windows.net');
  });

  it('only a blob URI (no queue and table) is a problem naming the setting', () => {
    const err = configError({ AzureWebJobsStorage__blobServiceUri: 'https://acct1.blob.core.windows.net' });
    expect(err.code).toBe('ConfigurationInvalid');
    expect(err.extra.settings).toEqual(['AzureWebJobsStorage']);
  });

  it('service URIs must be https URLs', () => {
    const err = configError({
      AzureWebJobsStorage__blobServiceUri: 'http://acct1.blob.core.windows.net',
      AzureWebJobsStorage__queueServiceUri: 'https://acct1.queue.core.windows.net',
      AzureWebJobsStorage__tableServiceUri: 'not a url',
    });
    expect(err.extra.settings).toEqual(
      expect.arrayContaining(['AzureWebJobsStorage__blobServiceUri', 'AzureWebJobsStorage__tableServiceUri']),
    );
    expect(err.message).toMatch(/AzureWebJobsStorage__blobServiceUri: must be an https URL/);
    expect(err.message).toMatch(/AzureWebJobsStorage__tableServiceUri: "not a url" is not a URL/);
  });

  it('__credential=managedidentity with __clientId selects that user-assigned identity', () => {
    const storage = storageOf({
      AzureWebJobsStorage__accountName: 'tallyhoprod',
      AzureWebJobsStorage__credential: 'managedidentity',
      AzureWebJobsStorage__clientId: clientId,
    });
    expect(storage.credential).toEqual({ kind: 'identity', managedIdentity: true, clientId });
  });

  it('__credential is matched case-insensitively; any other value is a problem naming it', () => {
    const upper = storageOf({ AzureWebJobsStorage__accountName: 'tallyhoprod', AzureWebJobsStorage__credential: 'ManagedIdentity' });
    expect(upper.credential).toEqual({ kind: 'identity', managedIdentity: true, clientId: undefined });
    const err = configError({ AzureWebJobsStorage__accountName: 'tallyhoprod', AzureWebJobsStorage__credential: 'clientsecret' });
    expect(err.extra.settings).toEqual(['AzureWebJobsStorage__credential']);
  });

  it('an account name Azure would not accept is a problem naming __accountName', () => {
    const err = configError({ AzureWebJobsStorage__accountName: 'Not_Valid' });
    expect(err.extra.settings).toEqual(['AzureWebJobsStorage__accountName']);
  });

  it('a connection string with AccountName and AccountKey gives shared-key access on the suffix it names', () => {
    const storage = storageOf({
      AzureWebJobsStorage: 'DefaultEndpointsProtocol=https;AccountName=acct2;AccountKey=a2V5;EndpointSuffix=core.chinacloudapi.cn',
    });
    expect(storage).toEqual({
      setting: 'AzureWebJobsStorage',
      accountName: 'acct2',
      endpoints: {
        blob: 'https://acct2.blob.core.chinacloudapi.cn',
        queue: 'https://acct2.queue.core.chinacloudapi.cn',
        table: 'https://acct2.table.core.chinacloudapi.cn',
      },
      credential: { kind: 'sharedKey', accountName: 'acct2', accountKey: 'a2V5' },
    });
  });

  it('a connection string wins over identity-based settings of the same name', () => {
    const storage = storageOf({ AzureWebJobsStorage: 'UseDevelopmentStorage=true', AzureWebJobsStorage__accountName: 'tallyhoprod' });
    expect(storage.accountName).toBe('devstoreaccount1');
    expect(storage.endpoints.table).toBe('http://127.0.0.1:10002/devstoreaccount1');
    expect(storage.credential.kind).toBe('sharedKey');
  });

  it('a SAS connection string with explicit endpoints keeps the token without its "?"', () => {
    const storage = storageOf({
      AzureWebJobsStorage:
        'BlobEndpoint=https://acct3.blob.core.windows.net/;QueueEndpoint=https://acct3.queue.core.windows.net;' +
        'TableEndpoint=https://acct3.table.core.windows.net;SharedAccessSignature=?sv=2024&sig=abc',
    });
    expect(storage.credential).toEqual({ kind: 'sas', token: 'sv=2024&sig=abc' });
    expect(storage.endpoints.blob).toBe('https://acct3.blob.core.windows.net');
    expect(storage.accountName).toBe('acct3');
  });

  it('a connection string without a credential is a problem naming the setting', () => {
    const err = configError({ AzureWebJobsStorage: 'DefaultEndpointsProtocol=https;AccountName=acct2' });
    expect(err.extra.settings).toEqual(['AzureWebJobsStorage']);
    expect(err.message).toMatch(/AccountKey/);
  });

  it('no storage setting at all is ConfigurationInvalid (500, not retryable) naming AzureWebJobsStorage', () => {
    const err = configError({});
    expect(err.code).toBe('ConfigurationInvalid');
    expect(err.status).toBe(500);
    expect(err.retryable).toBe(false);
    expect(err.extra.settings).toEqual(['AzureWebJobsStorage']);
    expect(err.message).toMatch(/AzureWebJobsStorage: not set/);
    expect(err.message).toMatch(/AzureWebJobsStorage__accountName/);
  });

  it('blank values count as unset', () => {
    expect(configError({ AzureWebJobsStorage: '   ', AzureWebJobsStorage__accountName: '' }).extra.settings).toEqual([
      'AzureWebJobsStorage',
    ]);
  });
});

describe('Service Bus connection (ServiceBusConnection)', () => {
  const storage: Env = { AzureWebJobsStorage: 'UseDevelopmentStorage=true' };

  it('is optional: none configured gives undefined', () => {
    expect(loadConfig(storage).serviceBus).toBeUndefined();
  });

  it('__fullyQualifiedNamespace with managed identity and a client id', () => {
    const config = loadConfig({
      ...storage,
      ServiceBusConnection__fullyQualifiedNamespace: 'tallyho-sb.servicebus.windows.net',
      ServiceBusConnection__credential: 'managedidentity',
      ServiceBusConnection__clientId: clientId,
    });
    expect(config.serviceBus).toEqual({
      kind: 'identity',
      setting: 'ServiceBusConnection',
      fullyQualifiedNamespace: 'tallyho-sb.servicebus.windows.net',
      managedIdentity: true,
      clientId,
    });
  });

  it('a namespace that is not a host name is a problem naming the setting', () => {
    const err = configError({ ...storage, ServiceBusConnection__fullyQualifiedNamespace: 'https://tallyho-sb/' });
    expect(err.extra.settings).toEqual(['ServiceBusConnection__fullyQualifiedNamespace']);
  });

  it('a connection string is kept as given', () => {
    const text = 'Endpoint=sb://tallyho-sb.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey=a2V5';
    expect(loadConfig({ ...storage, ServiceBusConnection: text }).serviceBus).toEqual({
      kind: 'connectionString',
      setting: 'ServiceBusConnection',
      connectionString: text,
    });
  });

  it('a malformed connection string (no Endpoint=sb://) is a problem naming the setting', () => {
    const err = configError({ ...storage, ServiceBusConnection: 'Endpoint=https://tallyho-sb.servicebus.windows.net/;SharedAccessKey=x' });
    expect(err.code).toBe('ConfigurationInvalid');
    expect(err.extra.settings).toEqual(['ServiceBusConnection']);
  });

  it('every bad setting is named at once', () => {
    const err = configError({ ServiceBusConnection: 'garbage', AzureWebJobsStorage__credential: 'password' });
    expect(err.extra.settings).toEqual(expect.arrayContaining(['AzureWebJobsStorage', 'ServiceBusConnection']));
  });
});

describe('storage clients built from identity-based settings (no network)', () => {
  it('talk to the configured endpoints', () => {
    const storage = storageOf({
      AzureWebJobsStorage__accountName: 'tallyhoprod',
      AzureWebJobsStorage__credential: 'managedidentity',
      AzureWebJobsStorage__clientId: clientId,
    });
    const clients = createStorageClients(storage);
    expect(clients.blobService.url).toMatch(/^https:\/\/tallyhoprod\.blob\.core\.windows\.net\/?$/);
    expect(clients.queueService.url).toMatch(/^https:\/\/tallyhoprod\.queue\.core\.windows\.net\/?$/);
    expect(clients.tableService.url).toMatch(/^https:\/\/tallyhoprod\.table\.core\.windows\.net\/?$/);
  });

  it('managedidentity + clientId gives a ManagedIdentityCredential for that user-assigned identity', () => {
    const credential = tokenCredentialFor(true, clientId);
    expect(credential).toBeInstanceOf(ManagedIdentityCredential);
    // The SDK keeps the client id on the instance; reading it avoids asking IMDS for a token.
    expect(Reflect.get(credential, 'clientId')).toBe(clientId);
    expect(Reflect.get(tokenCredentialFor(true, undefined), 'clientId')).toBeUndefined();
  });

  it('without __credential the chain (DefaultAzureCredential) is used, for local development', () => {
    expect(tokenCredentialFor(false, undefined)).toBeInstanceOf(DefaultAzureCredential);
    expect(tokenCredentialFor(false, clientId)).toBeInstanceOf(DefaultAzureCredential);
  });
});

describe('the signing key (TALLYHO_SIGNING_KEY)', () => {
  const storage = { AzureWebJobsStorage: 'UseDevelopmentStorage=true' };

  it('is undefined when unset (the app keeps its own key in storage) and the decoded bytes when set', () => {
    expect(loadConfig(storage).signing.key).toBeUndefined();
    const key = Buffer.alloc(48, 9);
    expect(loadConfig({ ...storage, TALLYHO_SIGNING_KEY: key.toString('base64') }).signing.key?.equals(key)).toBe(true);
  });

  it.each([
    ['too short', Buffer.alloc(31, 1).toString('base64')],
    ['not base64', 'this is not base64!'],
  ])('%s is a problem naming the setting, never its value', (_label, value) => {
    const err = configError({ ...storage, TALLYHO_SIGNING_KEY: value });
    expect(err.code).toBe('ConfigurationInvalid');
    expect(err.extra.settings).toEqual(['TALLYHO_SIGNING_KEY']);
    expect(err.message).not.toContain(value);
  });
});
