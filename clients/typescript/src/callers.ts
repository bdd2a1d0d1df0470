/**
 * Named callers (admin): issue a caller a credential with roles, list them, revoke one; and `me`,
 * which any caller may ask: who the app takes it for.
 */
import type { OperationOptions } from './options.js';
import { segment, type Transport } from './transport.js';
import type { CallerIssued, CallerSelf, CallerView } from './types.js';

export interface IssueOptions extends OperationOptions {
  /** Unset: valid until revoked. */
  readonly expiresInSeconds?: number;
}

export class Callers {
  constructor(private readonly transport: Transport) {}

  /**
   * Issues `name` a credential with `roles` (`admin`, `submitter`, `worker:*`, `worker:<processor>`).
   * The answer's `credential` is shown this once: hand it to the caller, who passes it to its own
   * client (`new TallyhoClient(url, credential)`). Not retried: a repeat would find the name taken.
   */
  async issue(name: string, roles: readonly string[], options: IssueOptions = {}): Promise<CallerIssued> {
    const answer = await this.transport.json<CallerIssued>({
      method: 'POST',
      path: 'callers',
      body: { name, roles, ...(options.expiresInSeconds === undefined ? {} : { expiresInSeconds: options.expiresInSeconds }) },
      key: 'admin',
      idempotent: false,
      signal: options.abortSignal,
    });
    return answer.body;
  }

  /** Every named caller with its roles and state (no credential). */
  async list(options: OperationOptions = {}): Promise<CallerView[]> {
    const answer = await this.transport.json<{ callers: CallerView[] }>({
      method: 'GET',
      path: 'callers',
      key: 'admin',
      idempotent: true,
      signal: options.abortSignal,
    });
    return answer.body.callers;
  }

  /** Revokes `name`'s credential: refused at once by the instance that answers, everywhere within the server's revocation bound. */
  async revoke(name: string, options: OperationOptions = {}): Promise<CallerView> {
    const answer = await this.transport.json<CallerView>({
      method: 'DELETE',
      path: `callers/${segment(name)}`,
      key: 'admin',
      idempotent: true,
      signal: options.abortSignal,
    });
    return answer.body;
  }

  /** Who the app takes this client for: its caller id, kind, roles and what it holds. */
  async me(options: OperationOptions = {}): Promise<CallerSelf> {
    const answer = await this.transport.json<CallerSelf>({
      method: 'GET',
      path: 'callers/me',
      idempotent: true,
      signal: options.abortSignal,
    });
    return answer.body;
  }
}
