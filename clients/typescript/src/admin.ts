/** Operator listings of gates and streams (admin key), for consoles and scripts. */
import type { Transport } from './transport.js';
import type { GateList, StreamRouteList } from './types.js';

export class Gates {
  constructor(private readonly transport: Transport) {}

  /** Gates with their state and waiters, in name order. */
  async list(options: { limit?: number; signal?: AbortSignal } = {}): Promise<GateList> {
    const answer = await this.transport.json<GateList>({
      method: 'GET',
      path: 'gates',
      query: { limit: options.limit },
      key: 'admin',
      signal: options.signal,
    });
    return answer.body;
  }
}

export class Streams {
  constructor(private readonly transport: Transport) {}

  /** Event types with a route of their own (remapped), in type order. */
  async list(options: { limit?: number; signal?: AbortSignal } = {}): Promise<StreamRouteList> {
    const answer = await this.transport.json<StreamRouteList>({
      method: 'GET',
      path: 'streams',
      query: { limit: options.limit },
      key: 'admin',
      signal: options.signal,
    });
    return answer.body;
  }
}
