/** Operator listings of gates and streams (admin key), for consoles and scripts. */
import { type ListOptions, type PagedAsyncIterableIterator, pagedList } from './paging.js';
import type { Transport } from './transport.js';
import type { GateList, GateView, StreamRoute, StreamRouteList } from './types.js';

export class Gates {
  constructor(private readonly transport: Transport) {}

  /** Gates with their state and waiters, in name order. */
  list(options: ListOptions = {}): PagedAsyncIterableIterator<GateView, GateList> {
    return pagedList(this.transport, { path: 'gates', key: 'admin' }, options);
  }
}

export class Streams {
  constructor(private readonly transport: Transport) {}

  /** Event types callers wrote to or an operator remapped, in type order, each with its route. */
  list(options: ListOptions = {}): PagedAsyncIterableIterator<StreamRoute, StreamRouteList> {
    return pagedList(this.transport, { path: 'streams', key: 'admin' }, options);
  }
}
