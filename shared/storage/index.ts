/** Storage: the connection, the SDK clients (one per service, tables and queues created on first use), their metrics. */
export { readStorageConnection, storageConnectionName } from './connection';
export { createStorageClients, type StorageClients } from './clients';
export { storageResponsesOf } from './metrics';
export { storageRetrySettings } from './settings';
