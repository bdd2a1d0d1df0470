/** The app as a Functions host runs it: settings from the environment, real clients, the system clock. */
import { randomUUID } from 'node:crypto';

import { systemClock } from '../clock';
import { createLogger } from '../log';
import { serviceBusSenders } from '../messaging/serviceBus';
import { createStorageClients } from '../storage/clients';
import { type App, createApp } from './createApp';
import { loadAppConfig } from './settings';

/** Throws ConfigurationInvalid (naming every bad setting) when the environment's settings are not valid. */
export function productionApp(env: Readonly<Record<string, string | undefined>> = process.env): App {
  const config = loadAppConfig(env);
  return createApp({
    config,
    storage: createStorageClients(config.storage, { retry: config.storageRetry }),
    serviceBus: serviceBusSenders(config.serviceBus),
    clock: systemClock,
    random: Math.random,
    logger: createLogger(),
    newId: randomUUID,
  });
}
