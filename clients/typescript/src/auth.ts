/**
 * Who the client says it is: a Microsoft Entra ID token credential (`DefaultAzureCredential` and the
 * other credentials of `@azure/identity`) or a Tallyho credential (`tly1.…`, issued by an admin),
 * sent as `Authorization: Bearer …` on every request, beside the function key when there is one.
 *
 * The token types have the shape of `@azure/core-auth`'s, declared here so that any Azure Identity
 * credential fits without this package depending on the Azure SDK at run time (it has no runtime
 * dependencies and runs in browsers); test/unit/auth.test.ts holds the two shapes together.
 *
 * Tokens are cached and refreshed by the rules of `@azure/core-rest-pipeline`'s
 * `bearerTokenAuthenticationPolicy` (its token cycler, 1.24). Not that policy itself: it runs only
 * inside a core-rest-pipeline pipeline (the cycler is not exported), reads `Date.now()` where this
 * client's clock is injected (so tests move time instead of waiting), and refuses `http:` outright,
 * which a local devhost speaks. The rules:
 * - no token, or one within 1 s of expiry: every caller waits for one refresh, shared;
 * - within 2 minutes of expiry (or past the token's `refreshAfterTimestamp`): one refresh starts in
 *   the background while callers go on with the token they have;
 * - a background refresh that fails is tried again every 3 s until the token expires; the try at
 *   expiry passes its failure to the callers waiting then, and the next call starts afresh.
 * Two differences: no caller's abort signal reaches the shared refresh (a caller who gives up stops
 * waiting, the others keep theirs), and tokens are not asked for Continuous Access Evaluation, whose
 * claims challenges Tallyho does not send.
 */
import type { Clock } from './clock.js';
import { TallyhoError } from './errors.js';
import { untilAborted } from './signals.js';

/** An access token, as `@azure/core-auth` has it. */
export interface AccessToken {
  readonly token: string;
  /** Epoch milliseconds. */
  readonly expiresOnTimestamp: number;
  /** Epoch milliseconds after which the credential advises getting a new token. */
  readonly refreshAfterTimestamp?: number | undefined;
}

/** What `getToken` is told; a subset of `@azure/core-auth`'s `GetTokenOptions`. */
export interface GetTokenOptions {
  readonly abortSignal?: AbortSignal | undefined;
}

/** A source of access tokens, as `@azure/core-auth` has it: `DefaultAzureCredential` and every credential of `@azure/identity`. */
export interface TokenCredential {
  getToken(scopes: string | string[], options?: GetTokenOptions): Promise<AccessToken | null>;
}

export interface CredentialOptions {
  /**
   * The Tallyho app registration tokens are asked for: its Application ID URI (`api://<app id>`) or
   * its application (client) id. The scope asked for is `<audience>/.default`.
   */
  readonly audience?: string;
  /** The scopes asked for, in place of `<audience>/.default`. */
  readonly scopes?: string | readonly string[];
}

/** The token cycler's figures (`@azure/core-rest-pipeline` DEFAULT_CYCLER_OPTIONS). */
const tokenRefresh = { refreshWindowMs: 120_000, forcedRefreshWindowMs: 1_000, retryIntervalMs: 3_000 } as const;

/** The prefix of a Tallyho credential (shared/identity/credentials.ts). */
const tallyhoCredentialPrefix = 'tly1.';

/** Something that puts an `Authorization` header value on a request. */
export interface Authorizer {
  header(signal: AbortSignal | undefined): Promise<string>;
}

function isTokenCredential(value: unknown): value is TokenCredential {
  return typeof value === 'object' && value !== null && typeof (value as { getToken?: unknown }).getToken === 'function';
}

function scopesOf(options: CredentialOptions): string[] {
  if (options.scopes !== undefined) {
    const scopes = typeof options.scopes === 'string' ? [options.scopes] : [...options.scopes];
    if (scopes.length === 0 || scopes.some((s) => s.trim() === '')) throw new TypeError('scopes must name at least one scope');
    return scopes;
  }
  const audience = options.audience?.trim().replace(/\/+$/, '') ?? '';
  if (audience === '') {
    throw new TypeError(
      "A token credential needs the app's audience: set audience to the Tallyho app registration's Application ID URI (api://<app id>), or scopes",
    );
  }
  return [`${audience}/.default`];
}

/** Bearer tokens travel only where nobody else can read them: https, or this machine. */
function checkTransportSecurity(baseUrl: string): void {
  const url = new URL(baseUrl);
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname) || /^127\.\d+\.\d+\.\d+$/.test(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw new TypeError(`A credential is sent only over https (http only to this machine): ${baseUrl}`);
  }
}

/** The authorizer for a client's `credential` option, or undefined without one. */
export function authorizerFor(
  credential: TokenCredential | string | undefined,
  options: CredentialOptions & { readonly baseUrl: string; readonly clock: Clock },
): Authorizer | undefined {
  if (credential === undefined) return undefined;
  checkTransportSecurity(options.baseUrl);
  if (typeof credential === 'string') {
    if (!credential.startsWith(tallyhoCredentialPrefix) || /\s/.test(credential)) {
      throw new TypeError(
        `A credential string must be a Tallyho credential (${tallyhoCredentialPrefix}…); a function key goes in functionKey`,
      );
    }
    const header = `Bearer ${credential}`;
    return { header: () => Promise.resolve(header) };
  }
  if (!isTokenCredential(credential)) throw new TypeError('credential must be a TokenCredential (getToken) or a Tallyho credential string');
  return new TokenCache(credential, scopesOf(options), options.clock);
}

/** One credential's token, cached and refreshed before it expires (the rules are in this file's header). */
class TokenCache implements Authorizer {
  private token: AccessToken | null = null;
  private refreshing: Promise<AccessToken> | null = null;

  constructor(
    private readonly credential: TokenCredential,
    private readonly scopes: readonly string[],
    private readonly clock: Clock,
  ) {}

  async header(signal: AbortSignal | undefined): Promise<string> {
    return `Bearer ${(await this.current(signal)).token}`;
  }

  /** The token to send now. */
  async current(signal?: AbortSignal): Promise<AccessToken> {
    const now = this.clock.now();
    const token = this.token;
    if (token === null || token.expiresOnTimestamp - tokenRefresh.forcedRefreshWindowMs < now) {
      return untilAborted(this.refresh(), signal);
    }
    if (this.refreshing === null && this.dueForRefresh(token, now)) {
      // Callers go on with the token they have; a failure is tried again inside refresh().
      this.refresh().catch(() => undefined);
    }
    return token;
  }

  private dueForRefresh(token: AccessToken, now: number): boolean {
    if (token.refreshAfterTimestamp !== undefined && token.refreshAfterTimestamp < now) return true;
    return token.expiresOnTimestamp - tokenRefresh.refreshWindowMs < now;
  }

  private refresh(): Promise<AccessToken> {
    this.refreshing ??= this.fetchUntil(this.token?.expiresOnTimestamp ?? this.clock.now()).then(
      (token) => {
        this.refreshing = null;
        this.token = token;
        return token;
      },
      (err: unknown) => {
        this.refreshing = null;
        this.token = null;
        throw new TallyhoError('Credential', `The token credential gave no token: ${err instanceof Error ? err.message : String(err)}`, {
          cause: err,
        });
      },
    );
    return this.refreshing;
  }

  /** Tries every retry interval while the current token is still good; the try at its expiry decides. */
  private async fetchUntil(deadline: number): Promise<AccessToken> {
    for (;;) {
      if (this.clock.now() >= deadline) {
        const token = await this.credential.getToken([...this.scopes]);
        if (token === null) throw new Error('getToken returned null');
        return token;
      }
      try {
        const token = await this.credential.getToken([...this.scopes]);
        if (token !== null) return token;
      } catch {
        // The token in hand is still good: try again after the interval.
      }
      await this.clock.sleep(tokenRefresh.retryIntervalMs);
    }
  }
}
