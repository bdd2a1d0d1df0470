/** The app as a Functions host runs it: settings from the environment, real clients, the system clock. */
import { randomUUID } from 'node:crypto';

import { systemClock } from '../clock';
import type { DurableClient } from '../durable';
import { createLogger } from '../log';
import { serviceBusSenders } from '../messaging';
import { createStorageClients, storageResponsesOf } from '../storage';
import { type App, createApp } from './createApp';
import { loadAppConfig } from './settings';
import { telemetryFromEnvironment } from './telemetry';

/**
 * Throws ConfigurationInvalid (naming every bad setting) when the environment's settings are not
 * valid. `recentDurable`: the latest invocation's Durable client (functions/_durable.ts).
 */
export function productionApp(
  env: Readonly<Record<string, string | undefined>> = process.env,
  recentDurable?: () => DurableClient | undefined,
): App {
  const config = loadAppConfig(env);
  const instanceId = randomUUID();
  const telemetry = telemetryFromEnvironment(env, config.telemetry, instanceId);
  const logger = createLogger();
  if (telemetry.exporters.length > 0) logger.log('info', 'telemetry.started', { exporters: telemetry.exporters });
  return createApp({
    config,
    storage: createStorageClients(config.storage, { retry: config.storageRetry, answered: storageResponsesOf(telemetry.telemetry) }),
    serviceBus: serviceBusSenders(config.serviceBus),
    clock: systemClock,
    random: Math.random,
    logger,
    newId: randomUUID,
    telemetry,
    recentDurable,
  });
}
