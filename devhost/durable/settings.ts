/**
 * The Durable extension's settings as the devhost uses them: host.json `extensions.durableTask`
 * (checked by the host's schema, devhost/app/hostConfig.ts) plus the devhost's own `DEVHOST_DURABLE_STORE`.
 */
import type { DurableTaskConfig } from '../app/hostConfig';
import { getSetting, type Settings } from '../app/settings';
import { defaultLimits, type EngineLimits } from './engine';
import { DevhostError } from '../errors';

export interface DurableSettings {
  readonly hubName: string;
  /** App setting that names the storage account (default AzureWebJobsStorage). */
  readonly connectionName: string;
  readonly store: 'storage' | 'memory' | 'auto';
  readonly limits: EngineLimits;
  /**
   * entityMessageReorderWindowInMinutes: above 0 the extension's MessageSorter de-duplicates
   * requests from orchestrations and entities (default 30, extension Options/DurableTaskOptions.cs:193).
   */
  readonly entityMessageReorderWindowMinutes: number;
}

export function readDurableSettings(config: DurableTaskConfig, settings: Settings): DurableSettings {
  const storeSetting = (getSetting(settings, 'DEVHOST_DURABLE_STORE') ?? 'auto').trim().toLowerCase();
  if (storeSetting !== 'storage' && storeSetting !== 'memory' && storeSetting !== 'auto') {
    throw new DevhostError('SettingsInvalid', `DEVHOST_DURABLE_STORE must be "storage", "memory" or "auto" (got "${storeSetting}")`);
  }
  const defaults = defaultLimits();
  return {
    hubName: config.hubName,
    connectionName: config.storageProvider.connectionName ?? config.storageProvider.connectionStringName ?? 'AzureWebJobsStorage',
    store: storeSetting,
    limits: {
      activities: config.maxConcurrentActivityFunctions ?? defaults.activities,
      orchestrations: config.maxConcurrentOrchestratorFunctions ?? defaults.orchestrations,
      entities: config.maxConcurrentEntityFunctions ?? defaults.entities,
      entityBatchSize: config.maxEntityOperationBatchSize ?? defaults.entityBatchSize,
    },
    entityMessageReorderWindowMinutes: config.entityMessageReorderWindowInMinutes ?? 30,
  };
}
