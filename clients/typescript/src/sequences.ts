/** Admin operations on sequences (create, list); numbers come from `Sequence`. */
import type { OperationOptions } from './options.js';
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

  async list(options: { limit?: number; signal?: AbortSignal } = {}): Promise<SequenceList> {
    const answer = await this.transport.json<SequenceList>({
      method: 'GET',
      path: 'sequences',
      query: { limit: options.limit },
      key: 'admin',
      signal: options.signal,
    });
    return answer.body;
  }
}
