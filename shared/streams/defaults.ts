/** The process-wide streams service the functions use, built on first use from the validated config. */
import { randomUUID } from 'node:crypto';

import { systemClock } from '../clock';
import { getConfig, settingNames } from '../config';
import { getLogger } from '../log';
import { containers, tables } from '../resources';
import { occBackoff, retryContextOf } from '../retry';
import { CappedSet } from '../storage/cappedSet';
import { getStorage } from '../storage/clients';
import { AppendCoalescer } from './appendCoalescer';
import { FlusherControl } from './flusherControl';
import { LedgerWatch } from './ledgerWatch';
import { RouteResolver } from './resolver';
import { RouteTable } from './routeTable';
import { StreamService } from './service';

let service: StreamService | undefined;

export function getStreamService(): StreamService {
  if (service === undefined) {
    const config = getConfig();
    const storage = getStorage(config);
    const settings = config.streams;
    const logger = getLogger();
    const routes = new RouteTable(() => storage.table(tables.streamRoutes));
    service = new StreamService({
      settings,
      routes,
      types: new CappedSet({
        // The routes table's `types|<hub>` partition; its route rows live in partition `route`.
        table: () => storage.table(tables.streamRoutes),
        partitionKey: `types|${settings.taskHub}`,
        max: settings.maxTypes,
        noun: 'stream types',
        setting: settingNames.streamsMaxTypes,
        retry: retryContextOf(
          { clock: systemClock, random: Math.random, logger: logger, backoff: occBackoff(config.sequences) },
          'the stream type count',
        ),
      }),
      // The jobs capability's invoice ledger is written by the app alone.
      ownTypes: new Set(config.jobs.billingLedgerStream === undefined ? [] : [config.jobs.billingLedgerStream]),
      resolver: new RouteResolver({
        table: routes,
        clock: systemClock,
        ttlMs: settings.routeCacheSeconds * 1000,
        partitions: settings.partitions,
      }),
      watch: new LedgerWatch(systemClock, logger),
      appends: new AppendCoalescer(),
      flushers: new FlusherControl(systemClock, logger),
      clock: systemClock,
      random: Math.random,
      logger,
      newId: randomUUID,
      container: containers.streams,
    });
  }
  return service;
}
