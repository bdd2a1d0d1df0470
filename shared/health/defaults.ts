/** The health check's production wiring: the process's config and storage clients. */
import { systemClock } from '../clock';
import { getConfig } from '../config';
import { getStorage } from '../storage/clients';
import type { HealthDeps } from './check';

export function defaultHealthDeps(): HealthDeps {
  return { config: getConfig, storage: (config) => getStorage(config), clock: systemClock };
}
