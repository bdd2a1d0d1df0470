/**
 * Storage SDK clients, built once by the composition root (shared/app/) from the validated config.
 * The same code talks to Azurite (shared key over http) and to Azure (managed identity over https).
 */
import {
  AzureNamedKeyCredential,
  AzureSASCredential,
  TableClient,
  TableServiceClient,
  type TableServiceClientOptions,
} from '@azure/data-tables';
import { isTokenCredential, type TokenCredential } from '@azure/core-auth';
import type { PipelinePolicy } from '@azure/core-rest-pipeline';
import {
  AnonymousCredential,
  BlobServiceClient,
  type ContainerClient,
  newPipeline as newBlobPipeline,
  StorageSharedKeyCredential,
} from '@azure/storage-blob';
import {
  AnonymousCredential as QueueAnonymousCredential,
  newPipeline as newQueuePipeline,
  type QueueClient,
  QueueServiceClient,
  StorageSharedKeyCredential as QueueSharedKeyCredential,
} from '@azure/storage-queue';

import type { StorageConnection } from './connection';
import { identitySdk } from '../onDemand';
import { translateStorageError } from './errors';
import type { StorageRetrySettings } from './settings';

export type StorageService = 'blob' | 'queue' | 'table';

/** Called once per request the SDK sends (tables: per attempt; blobs and queues: per call). */
type StorageRequestObserver = (service: StorageService, method: string, url: string) => void;

/** Called with the status of every response the SDK receives (storage metrics: throttling). */
type StorageResponseObserver = (service: StorageService, status: number) => void;

export interface StorageClientOptions {
  readonly retry?: StorageRetrySettings;
  readonly observe?: StorageRequestObserver;
  readonly answered?: StorageResponseObserver;
}

export interface StorageClients {
  readonly connection: StorageConnection;
  readonly tableService: TableServiceClient;
  readonly blobService: BlobServiceClient;
  readonly queueService: QueueServiceClient;
  /** A client for the table, which exists once the promise resolves (created on first use). */
  table(name: string): Promise<TableClient>;
  queue(name: string): Promise<QueueClient>;
  container(name: string): Promise<ContainerClient>;
}

const defaultRetry: StorageRetrySettings = { maxTries: 3, tryTimeoutMs: 10_000 };

export function tokenCredentialFor(managedIdentity: boolean, clientId: string | undefined): TokenCredential {
  const { DefaultAzureCredential, ManagedIdentityCredential } = identitySdk();
  if (managedIdentity) return clientId === undefined ? new ManagedIdentityCredential() : new ManagedIdentityCredential({ clientId });
  return new DefaultAzureCredential(clientId === undefined ? {} : { managedIdentityClientId: clientId });
}

function withSas(url: string, token: string): string {
  return `${url}${url.includes('?') ? '&' : '?'}${token}`;
}

/** core-rest-pipeline requests have no timeout by default; a hung connection would hang a caller. */
function timeoutPolicy(ms: number): PipelinePolicy {
  return {
    name: 'tallyhoTryTimeout',
    sendRequest: (request, next) => {
      if (request.timeout === 0) request.timeout = ms;
      return next(request);
    },
  };
}

function observerPolicy(observe: StorageRequestObserver | undefined, answered: StorageResponseObserver | undefined): PipelinePolicy {
  return {
    name: 'tallyhoObserveTable',
    sendRequest: async (request, next) => {
      observe?.('table', request.method, request.url);
      const response = await next(request);
      answered?.('table', response.status);
      return response;
    },
  };
}

/** A v1 request-policy factory, the extension point the blob and queue SDKs offer. */
function observerFactory(
  service: StorageService,
  observe: StorageRequestObserver | undefined,
  answered: StorageResponseObserver | undefined,
) {
  return {
    create: (next: { sendRequest(r: { method: string; url: string }): Promise<{ status: number }> }) => ({
      sendRequest: async (request: { method: string; url: string }) => {
        observe?.(service, request.method, request.url);
        const response = await next.sendRequest(request);
        answered?.(service, response.status);
        return response;
      },
    }),
  };
}

type TableCredential = AzureNamedKeyCredential | AzureSASCredential | TokenCredential;
type TableOptions = TableServiceClientOptions;

// The table SDK overloads its constructors per credential kind, so a union has to be split here.
function tableClient(url: string, name: string, credential: TableCredential, options: TableOptions): TableClient {
  if (credential instanceof AzureNamedKeyCredential) return new TableClient(url, name, credential, options);
  if (credential instanceof AzureSASCredential) return new TableClient(url, name, credential, options);
  return new TableClient(url, name, credential, options);
}

function tableServiceClient(url: string, credential: TableCredential, options: TableOptions): TableServiceClient {
  if (credential instanceof AzureNamedKeyCredential) return new TableServiceClient(url, credential, options);
  if (credential instanceof AzureSASCredential) return new TableServiceClient(url, credential, options);
  return new TableServiceClient(url, credential, options);
}

function onceByName<T>(make: (name: string) => Promise<T>): (name: string) => Promise<T> {
  const made = new Map<string, Promise<T>>();
  return (name) => {
    let promise = made.get(name);
    if (promise === undefined) {
      promise = make(name);
      made.set(name, promise);
      // A failed creation (storage down) must not poison later calls.
      promise.catch(() => made.delete(name));
    }
    return promise;
  };
}

export function createStorageClients(connection: StorageConnection, options: StorageClientOptions = {}): StorageClients {
  const retry = options.retry ?? defaultRetry;
  const { endpoints, credential } = connection;
  const tablePolicies = [{ policy: timeoutPolicy(retry.tryTimeoutMs), position: 'perRetry' as const }];
  const observing = options.observe !== undefined || options.answered !== undefined;
  if (observing) tablePolicies.push({ policy: observerPolicy(options.observe, options.answered), position: 'perRetry' });
  const tableOptions = {
    allowInsecureConnection: endpoints.table.startsWith('http:'),
    retryOptions: { maxRetries: retry.maxTries - 1, retryDelayInMs: 100, maxRetryDelayInMs: 2000 },
    additionalPolicies: tablePolicies,
  };
  const storageRetry = { maxTries: retry.maxTries, tryTimeoutInMs: retry.tryTimeoutMs, retryDelayInMs: 100, maxRetryDelayInMs: 2000 };

  const tableCredential: TableCredential =
    credential.kind === 'sharedKey'
      ? new AzureNamedKeyCredential(credential.accountName, credential.accountKey)
      : credential.kind === 'sas'
        ? new AzureSASCredential(credential.token)
        : tokenCredentialFor(credential.managedIdentity, credential.clientId);
  const sasSuffix = (url: string): string => (credential.kind === 'sas' ? withSas(url, credential.token) : url);
  const blobPipeline = newBlobPipeline(
    credential.kind === 'sharedKey'
      ? new StorageSharedKeyCredential(credential.accountName, credential.accountKey)
      : isTokenCredential(tableCredential)
        ? tableCredential
        : new AnonymousCredential(),
    { retryOptions: storageRetry },
  );
  const queuePipeline = newQueuePipeline(
    credential.kind === 'sharedKey'
      ? new QueueSharedKeyCredential(credential.accountName, credential.accountKey)
      : isTokenCredential(tableCredential)
        ? tableCredential
        : new QueueAnonymousCredential(),
    { retryOptions: storageRetry },
  );
  if (observing) {
    // The factory shape is the SDKs' documented v1 policy interface; their typings name internal classes.
    blobPipeline.factories.push(observerFactory('blob', options.observe, options.answered) as never);
    queuePipeline.factories.push(observerFactory('queue', options.observe, options.answered) as never);
  }
  const tableService = tableServiceClient(endpoints.table, tableCredential, tableOptions);
  const blobService = new BlobServiceClient(sasSuffix(endpoints.blob), blobPipeline);
  const queueService = new QueueServiceClient(sasSuffix(endpoints.queue), queuePipeline);

  return {
    connection,
    tableService,
    blobService,
    queueService,
    table: onceByName(async (name) => {
      const client = tableClient(endpoints.table, name, tableCredential, tableOptions);
      try {
        await client.createTable();
      } catch (err) {
        throw translateStorageError(err, `creating table ${name}`);
      }
      return client;
    }),
    queue: onceByName(async (name) => {
      const client = queueService.getQueueClient(name);
      try {
        await client.createIfNotExists();
      } catch (err) {
        throw translateStorageError(err, `creating queue ${name}`);
      }
      return client;
    }),
    container: onceByName(async (name) => {
      const client = blobService.getContainerClient(name);
      try {
        await client.createIfNotExists();
      } catch (err) {
        throw translateStorageError(err, `creating container ${name}`);
      }
      return client;
    }),
  };
}
