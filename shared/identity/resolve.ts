/**
 * One Caller per request, from what was authenticated (docs/security.md "Callers"):
 *
 * - anonymous-level routes: `anonymous`, whatever the request carries;
 * - a bearer credential (`tly1.…`) or Microsoft Entra ID token: verified here, and a 401 when it
 *   does not verify — never a fall-back to a weaker identity;
 * - the App Service principal, where the platform set it (./principal.ts);
 * - nothing presented: in the keys modes the host checked a key before the app saw the request, so
 *   an admin-level route means the master key and a function-level one some function key (the
 *   shared `key:shared` caller, with TALLYHO_KEY_CALLER_ROLES); in `entra` mode the host checked
 *   nothing, so a 401.
 *
 * In the keys modes an admin-level route is reached only with the master key, so a verified
 * identity there holds the admin role whatever its own roles.
 */
import { anonymousCaller, type Caller, type HeaderReader, masterKeyCaller, type RouteLevel, sharedKeyCaller } from './caller';
import { credentialPrefix, credentialVerifier } from './credentials';
import { entraVerifier, type TokenVerifier } from './entra';
import { platformPrincipal } from './principal';
import { unauthorized } from './refusal';
import type { IdentitySettings } from './settings';

export interface CallerResolver {
  resolve(headers: HeaderReader, level: RouteLevel): Promise<Caller>;
}

export interface PlatformFacts {
  /** App Service Authentication is on (WEBSITE_AUTH_ENABLED, which the platform sets). */
  readonly appServiceAuthEnabled: boolean;
}

/** The platform's facts from the environment: what App Service sets, never a Tallyho setting. */
export function platformFacts(env: Readonly<Record<string, string | undefined>>): PlatformFacts {
  return { appServiceAuthEnabled: (env.WEBSITE_AUTH_ENABLED ?? '').trim().toLowerCase() === 'true' };
}

/** The token of an `Authorization: Bearer <token>` header; undefined without one (other schemes are not ours). */
function bearerToken(headers: HeaderReader): string | undefined {
  const value = headers.get('authorization');
  if (value === null) return undefined;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(value.trim());
  if (match === null) {
    if (/^Bearer\b/i.test(value.trim())) throw unauthorized('The Authorization header holds no single bearer token');
    return undefined;
  }
  return match[1];
}

export function createCallerResolver(
  settings: IdentitySettings,
  platform: PlatformFacts,
  overrides: { readonly entra?: TokenVerifier; readonly isRevoked?: (credentialId: string) => Promise<boolean> } = {},
): CallerResolver {
  const credentials = credentialVerifier({
    key: settings.credentialsKey,
    revoked: settings.credentialsRevoked,
    ...(overrides.isRevoked === undefined ? {} : { isRevoked: overrides.isRevoked }),
  });
  const entraOn = settings.mode !== 'keys';
  const entra =
    overrides.entra ??
    (entraOn
      ? entraVerifier({ tenantId: settings.entraTenantId, audiences: settings.entraAudiences, authority: settings.entraAuthority })
      : undefined);
  const keysAreTheDoor = settings.mode !== 'entra';

  async function presented(headers: HeaderReader): Promise<Caller | undefined> {
    const token = bearerToken(headers);
    if (token !== undefined) {
      if (token.startsWith(credentialPrefix)) return credentials(token);
      if (entra === undefined) {
        throw unauthorized(
          'This deployment names callers by Tallyho credential (TALLYHO_AUTH_MODE is keys): Microsoft Entra ID tokens are not accepted',
        );
      }
      return entra(token);
    }
    if (entraOn && platform.appServiceAuthEnabled) return platformPrincipal(headers);
    return undefined;
  }

  return {
    async resolve(headers, level) {
      if (level === 'anonymous') return anonymousCaller;
      const caller = await presented(headers);
      if (!keysAreTheDoor) {
        if (caller === undefined) throw unauthorized('Send a Microsoft Entra ID access token for this app (Authorization: Bearer …)');
        return caller;
      }
      if (level === 'admin') return caller === undefined ? masterKeyCaller : { ...caller, roles: masterKeyCaller.roles };
      return caller ?? sharedKeyCaller(settings.keyCallerRoles);
    },
  };
}
