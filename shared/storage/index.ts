/** Storage: the SDK clients (one per service, tables and queues created on first use) and their metrics; the connection is read by connection.ts. */
export { createStorageClients, type StorageClients } from './clients';
export { storageResponsesOf } from './metrics';
