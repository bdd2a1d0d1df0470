/**
 * The process-wide counter service the HTTP functions and the rollup timer use, built on first use
 * from the validated config and the shared storage clients.
 */
import { systemClock } from '../clock';
import { getConfig } from '../config';
import { getLogger } from '../log';
import { occBackoff } from '../retry';
import { getStorage } from '../storage/clients';
import { CounterService } from './service';

let service: CounterService | undefined;

export function getCounterService(): CounterService {
  if (service === undefined) {
    const config = getConfig();
    const storage = getStorage(config);
    service = new CounterService({
      table: (name) => storage.table(name),
      settings: config.counters,
      idempotencyTtlSeconds: config.http.idempotencyTtlSeconds,
      clock: systemClock,
      random: Math.random,
      logger: getLogger(),
      // Shared with sequences: TALLYHO_OCC_MAX_ATTEMPTS / TALLYHO_OCC_MAX_WAIT_MS bound every lost-race loop.
      backoff: occBackoff(config.sequences),
    });
  }
  return service;
}
