/** Lists as the console shows them: the first pages, merged, and whether more follow. */
import type { ApiPage, PagedAsyncIterableIterator } from '../clients/typescript/src/index.js';
import type { Listing } from './types';

type ConsolePage<T> = ApiPage<T> & { readonly unreadable?: Listing<T>['unreadable'] };

/** The first `pages` pages of `list`: what a section shows until "Show more" asks for one more. */
export async function firstPages<T>(list: PagedAsyncIterableIterator<T, ConsolePage<T>>, pages: number): Promise<Listing<T>> {
  const items: T[] = [];
  const unreadable: Listing<T>['unreadable'] = [];
  let read = 0;
  for await (const page of list.byPage()) {
    items.push(...page.items);
    unreadable.push(...(page.unreadable ?? []));
    if (++read >= pages) return { items, unreadable, more: page.continuationToken !== undefined };
  }
  return { items, unreadable, more: false };
}
