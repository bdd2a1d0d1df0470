/**
 * The routes table: one row per remapped event type (PartitionKey `route`, RowKey = type). Writes
 * are conditional (insert-if-absent, or replace with the row's ETag), so two concurrent remaps of
 * one type cannot both win.
 */
import { odata, type TableClient } from '@azure/data-tables';

import { AppError } from '../errors';
import { hasStatus, translateStorageError } from '../storage/errors';
import type { Unreadable } from '../storage/list';
import type { StreamRoute } from './route';

const partitionKey = 'route';

interface RouteRow {
  readonly partitionKey: string;
  readonly rowKey: string;
  readonly partition: string;
  readonly resource: string;
  readonly version: number;
  readonly previousPartition?: string;
  readonly previousResource?: string;
  readonly previousVersion?: number;
}

export interface StoredRoute {
  readonly route: StreamRoute;
  readonly etag: string;
}

function fromRow(row: RouteRow & { etag?: string }): StoredRoute {
  if (typeof row.partition !== 'string' || typeof row.resource !== 'string' || typeof row.version !== 'number') {
    throw new AppError('CorruptState', `The route row of ${row.rowKey} is missing fields`);
  }
  const previous =
    row.previousPartition !== undefined && row.previousResource !== undefined && row.previousVersion !== undefined
      ? { partition: row.previousPartition, resource: row.previousResource, version: row.previousVersion }
      : undefined;
  return {
    route: {
      type: row.rowKey,
      partition: row.partition,
      resource: row.resource,
      version: row.version,
      source: 'table',
      ...(previous === undefined ? {} : { previous }),
    },
    etag: row.etag ?? '',
  };
}

export class RouteTable {
  constructor(private readonly table: () => Promise<TableClient>) {}

  async get(type: string): Promise<StoredRoute | undefined> {
    const table = await this.table();
    try {
      return fromRow(await table.getEntity<RouteRow>(partitionKey, type));
    } catch (err) {
      if (hasStatus(err, 404)) return undefined;
      throw translateStorageError(err, `reading the route of ${type}`);
    }
  }

  /**
   * The routes of the remapped types from `first` to `last` (inclusive), by type, for a page of the
   * types list; a row that cannot be read is reported by its type, not fatal to the page.
   */
  async within(first: string, last: string): Promise<{ routes: Map<string, StreamRoute>; unreadable: Unreadable[] }> {
    const table = await this.table();
    const routes = new Map<string, StreamRoute>();
    const unreadable: Unreadable[] = [];
    try {
      const rows = table.listEntities<RouteRow>({
        queryOptions: { filter: odata`PartitionKey eq ${partitionKey} and RowKey ge ${first} and RowKey le ${last}` },
      });
      for await (const row of rows) {
        try {
          routes.set(row.rowKey, fromRow(row).route);
        } catch (err) {
          unreadable.push({ name: row.rowKey, detail: err instanceof Error ? err.message : String(err) });
        }
      }
    } catch (err) {
      throw translateStorageError(err, 'listing stream routes');
    }
    return { routes, unreadable };
  }

  /**
   * Writes `route` for its type if the row is still what the caller read (`etag`; undefined: no row
   * yet). Resolves false when someone else changed it first.
   */
  async put(route: StreamRoute, etag: string | undefined): Promise<boolean> {
    const table = await this.table();
    const row: RouteRow = {
      partitionKey,
      rowKey: route.type,
      partition: route.partition,
      resource: route.resource,
      version: route.version,
      ...(route.previous === undefined
        ? {}
        : {
            previousPartition: route.previous.partition,
            previousResource: route.previous.resource,
            previousVersion: route.previous.version,
          }),
    };
    try {
      if (etag === undefined) await table.createEntity(row);
      else await table.updateEntity(row, 'Replace', { etag });
      return true;
    } catch (err) {
      if (hasStatus(err, 409) || hasStatus(err, 412)) return false;
      throw translateStorageError(err, `writing the route of ${route.type}`);
    }
  }
}
