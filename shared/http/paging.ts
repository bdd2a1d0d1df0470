/**
 * The one paging convention of every list (`GET /api/gates`, `…/jobs/{id}/results`, `/api/schedules`…),
 * as the Azure REST API guidelines spell it: `maxPageSize` and `continuationToken` in the query,
 * `{ items, continuationToken }` in the body, the token present only when another page follows.
 */
import * as z from 'zod';

const maxPageSizeCeiling = 1000;

const maxPageSize = z.coerce
  .number()
  .int()
  .min(1)
  .max(maxPageSizeCeiling)
  .default(100)
  .meta({ id: 'MaxPageSize', description: 'At most this many items in the page (1-1000, default 100); a page may hold fewer.' });

const continuationToken = z
  .string()
  .min(1)
  .max(2048)
  .regex(/^[A-Za-z0-9_-]+$/, 'Pass back the continuationToken a page gave, unchanged')
  .meta({
    id: 'ContinuationToken',
    description:
      'Opaque: where a page of a list ends. A page carries one when another page follows; send it back as the `continuationToken` ' +
      'query parameter, unchanged, to the same list with the same filters for that page.',
  });

/** The paging query of a list; `filters` are the list's own (e.g. `state`), bound into its tokens. */
export function pageQuery<S extends z.ZodRawShape>(filters: S) {
  return z.strictObject({ ...filters, maxPageSize, continuationToken: continuationToken.optional() });
}

const unreadable = z
  .array(z.object({ name: z.string(), detail: z.string() }))
  .meta({ description: 'Entries of this page whose stored state could not be read (CorruptState), with why; they need an operator.' });

const pageNote = ' The list is complete once a page comes without a continuationToken.';

/**
 * A page of `item`s; operator lists also name the `unreadable` entries of the page. The token is the
 * same component as the query parameter, so the document says once what a token is.
 */
export function pageOf<T extends z.ZodType>(item: T, id: string, description: string, options: { unreadable?: boolean } = {}) {
  const page = { items: z.array(item), continuationToken: continuationToken.optional() };
  return (options.unreadable === true ? z.object({ ...page, unreadable }) : z.object(page)).meta({
    id,
    description: description + pageNote,
  });
}

/** A page as a store reads it (shared/storage/list.ts `Page`): the shape the body is made from. */
interface StoredPage<T> {
  readonly items: readonly T[];
  readonly unreadable: readonly { readonly name: string; readonly detail: string }[];
  readonly continuationToken?: string;
}

/** The body of a page, items shown with `view`; `unreadable` for the lists that document it. */
export function pageBody<T, V>(
  page: StoredPage<T>,
  view: (item: T) => V,
  options: { unreadable?: boolean } = {},
): { items: V[]; unreadable?: StoredPage<T>['unreadable']; continuationToken?: string } {
  return {
    items: page.items.map(view),
    ...(options.unreadable === true ? { unreadable: page.unreadable } : {}),
    ...(page.continuationToken === undefined ? {} : { continuationToken: page.continuationToken }),
  };
}
