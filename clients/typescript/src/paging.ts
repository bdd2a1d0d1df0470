/**
 * Every list of the API, the way the Azure SDKs page: iterate the items (`for await`), or take a
 * page at a time with `byPage({ continuationToken, maxPageSize })` — a page is the API's own body
 * (`items`, `continuationToken` when another page follows, and for operator lists `unreadable`),
 * so a caller can stop, keep the token, and resume later from it. The shape follows
 * @azure/core-paging's PagedAsyncIterableIterator without depending on it.
 */
import type { Query, Transport } from './transport.js';

export interface PageSettings {
  /** Resume where the page that gave this token ended. */
  readonly continuationToken?: string | undefined;
  /** At most this many items per page (1-1000; the server's default is 100). A page may hold fewer. */
  readonly maxPageSize?: number | undefined;
}

/** A page as the API answers it. */
export interface ApiPage<T> {
  readonly items: T[];
  readonly continuationToken?: string;
}

export interface PagedAsyncIterableIterator<TElement, TPage = ApiPage<TElement>, TPageSettings = PageSettings> {
  next(): Promise<IteratorResult<TElement>>;
  [Symbol.asyncIterator](): PagedAsyncIterableIterator<TElement, TPage, TPageSettings>;
  /** The pages from `settings.continuationToken` on (from the start without one), each fetched when asked for. */
  byPage(settings?: TPageSettings): AsyncIterableIterator<TPage>;
}

/** Options every list takes. */
export interface ListOptions {
  /** Items per request when iterating items (byPage's own maxPageSize wins). */
  readonly maxPageSize?: number;
  readonly signal?: AbortSignal;
}

/** The pages of `GET <path>` (with the list's own filters in `query`), as one PagedAsyncIterableIterator. */
export function pagedList<T, P extends ApiPage<T>>(
  transport: Transport,
  spec: { readonly path: string; readonly query?: Query; readonly key?: 'admin' },
  options: ListOptions = {},
): PagedAsyncIterableIterator<T, P> {
  async function* pages(settings: PageSettings = {}): AsyncGenerator<P, void, undefined> {
    let continuationToken = settings.continuationToken;
    const maxPageSize = settings.maxPageSize ?? options.maxPageSize;
    do {
      const answer = await transport.json<P>({
        method: 'GET',
        path: spec.path,
        query: { ...spec.query, maxPageSize, continuationToken },
        ...(spec.key === undefined ? {} : { key: spec.key }),
        signal: options.signal,
      });
      yield answer.body;
      continuationToken = answer.body.continuationToken;
    } while (continuationToken !== undefined);
  }
  async function* items(): AsyncGenerator<T, void, undefined> {
    for await (const page of pages()) yield* page.items;
  }
  const all = items();
  const iterator: PagedAsyncIterableIterator<T, P> = {
    next: () => all.next(),
    [Symbol.asyncIterator]: () => iterator,
    byPage: (settings) => pages(settings),
  };
  return iterator;
}
