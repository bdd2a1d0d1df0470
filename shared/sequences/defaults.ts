/**
 * The process-wide sequence service the HTTP functions use: built on first use from the validated
 * config and the shared storage clients, and closed on graceful shutdown so unused numbers are
 * returned.
 */
import { randomUUID } from 'node:crypto';

import { systemClock } from '../clock';
import { getConfig } from '../config';
import { IdempotencyStore } from '../idempotency';
import { onShutdown } from '../lifecycle';
import { getLogger } from '../log';
import { tables } from '../resources';
import { occBackoff } from '../retry';
import { getStorage } from '../storage/clients';
import { SequenceService } from './service';
import { SequenceStore } from './store';

let service: SequenceService | undefined;

export function getSequenceService(): SequenceService {
  if (service === undefined) {
    const config = getConfig();
    const storage = getStorage(config);
    const created = new SequenceService({
      store: new SequenceStore(() => storage.table(tables.sequences)),
      idempotency: new IdempotencyStore(() => storage.table(tables.idempotency), systemClock, config.http.idempotencyTtlSeconds),
      clock: systemClock,
      random: Math.random,
      logger: getLogger(),
      backoff: occBackoff(config.sequences),
      autoCreate: config.sequences.autoCreate,
      maxAutoCreated: config.sequences.maxAutoCreated,
      instanceId: randomUUID(),
    });
    onShutdown(async () => {
      await created.shutdown();
    });
    service = created;
  }
  return service;
}
