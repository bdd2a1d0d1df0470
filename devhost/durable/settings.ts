/**
 * The Durable extension's settings as the devhost reads them: host.json `extensions.durableTask`
 * (hub name, storage connection, concurrency) plus the devhost's own `DEVHOST_DURABLE_STORE`.
 */
import { type JsonObject, readNumber, readString } from '../app/hostJson';
import { getSetting, SettingsError } from '../app/settings';
import type { EngineLimits } from './engine';
import { defaultLimits } from './engine';

export interface DurableSettings {
  readonly hubName: string;
  /** App setting that names the storage account (default AzureWebJobsStorage). */
  readonly connectionName: string;
  readonly store: 'storage' | 'memory' | 'auto';
  readonly limits: EngineLimits;
}

const hubNamePattern = /^[A-Za-z][A-Za-z0-9]{2,44}$/;

export function readDurableSettings(
  hostJson: Readonly<JsonObject>,
  settings: Readonly<Record<string, string | undefined>>,
): DurableSettings {
  const hubName = readString(hostJson, 'extensions.durableTask.hubName') ?? 'TestHubName';
  if (!hubNamePattern.test(hubName)) {
    throw new SettingsError(
      `Task hub name '${hubName}' should contain only alphanumeric characters, start with a letter, and have length between 3 and 45.`,
    );
  }
  const connectionName =
    readString(hostJson, 'extensions.durableTask.storageProvider.connectionName') ??
    readString(hostJson, 'extensions.durableTask.storageProvider.connectionStringName') ??
    'AzureWebJobsStorage';
  const storeSetting = (getSetting(settings, 'DEVHOST_DURABLE_STORE') ?? 'auto').trim().toLowerCase();
  if (storeSetting !== 'storage' && storeSetting !== 'memory' && storeSetting !== 'auto') {
    throw new SettingsError(`DEVHOST_DURABLE_STORE must be "storage", "memory" or "auto" (got "${storeSetting}")`);
  }
  const defaults = defaultLimits();
  const positive = (path: string, fallback: number): number => Math.max(1, Math.floor(readNumber(hostJson, path, fallback)));
  return {
    hubName,
    connectionName,
    store: storeSetting,
    limits: {
      activities: positive('extensions.durableTask.maxConcurrentActivityFunctions', defaults.activities),
      orchestrations: positive('extensions.durableTask.maxConcurrentOrchestratorFunctions', defaults.orchestrations),
      entities: positive('extensions.durableTask.maxConcurrentEntityFunctions', defaults.entities),
      entityBatchSize: positive('extensions.durableTask.maxEntityOperationBatchSize', defaults.entityBatchSize),
    },
  };
}
