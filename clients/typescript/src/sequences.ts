/** Admin operations on sequences (create, list); numbers come from `Sequence`. */
import type { OperationOptions } from './options.js';
import { type ListOptions, type PagedAsyncIterableIterator, pagedList } from './paging.js';
import { segment, type Transport } from './transport.js';
import type { SequenceList, SequenceSettingsInput, SequenceView } from './types.js';

export class Sequences {
  constructor(private readonly transport: Transport) {}

  /** Creates the sequence, or confirms the settings of an existing one (409 when they differ). */
  async configure(name: string, settings: SequenceSettingsInput = {}, options: OperationOptions = {}): Promise<SequenceView> {
    const answer = await this.transport.json<SequenceView>({
      method: 'PUT',
      path: `sequences/${segment(name)}`,
      body: settings,
      key: 'admin',
      idempotent: true,
      signal: options.abortSignal,
    });
    return answer.body;
  }

  /** Sequences with their high-water marks, in name order. */
  list(options: ListOptions = {}): PagedAsyncIterableIterator<SequenceView, SequenceList> {
    return pagedList(this.transport, { path: 'sequences', key: 'admin' }, options);
  }
}
