/**
 * Operator listings: up to `limit` rows of a table scan, each parsed on its own, so one row that
 * cannot be read is reported by name instead of failing the whole list.
 */
import type { TableClient, TableEntityResult } from '@azure/data-tables';

import { translateStorageError } from './errors';

interface Unreadable {
  readonly name: string;
  readonly detail: string;
}

export interface Listing<T> {
  readonly items: T[];
  readonly unreadable: Unreadable[];
  /** More rows match than `limit`. */
  readonly truncated: boolean;
}

export async function listRows<T, E extends object = Record<string, unknown>>(
  table: TableClient,
  query: { readonly filter: string; readonly limit: number; readonly doing: string },
  parse: (row: TableEntityResult<E>) => T,
): Promise<Listing<T>> {
  const items: T[] = [];
  const unreadable: Unreadable[] = [];
  try {
    for await (const row of table.listEntities<E>({ queryOptions: { filter: query.filter } })) {
      if (items.length + unreadable.length >= query.limit) return { items, unreadable, truncated: true };
      try {
        items.push(parse(row));
      } catch (err) {
        unreadable.push({ name: row.partitionKey ?? '', detail: err instanceof Error ? err.message : String(err) });
      }
    }
  } catch (err) {
    throw translateStorageError(err, query.doing);
  }
  return { items, unreadable, truncated: false };
}
