/**
 * Microsoft Entra ID access tokens, validated in the app (docs/security.md "Callers"): RS256 only,
 * issued by `<authority>/<tenant>/v2.0` (v2 tokens: the app registration sets
 * `requestedAccessTokenVersion: 2`), for one of the configured audiences, inside its validity (60 s
 * of clock skew), signed with a key of the tenant's published set. The key set is jose's remote
 * JWKS: fetched on first use, kept for 10 minutes, fetched again at most every 30 s when a token
 * names a key it does not hold (Entra rolls keys), each fetch given 5 s.
 *
 * The caller is `entra:<oid>`, the token's object id: the same identity whatever app it used to get
 * the token, and the same id the App Service principal gives (./principal.ts).
 */
import { createRemoteJWKSet, type JWTPayload, jwtVerify } from 'jose';

import type { Caller } from './caller';
import { rolesFromAppRoles } from './caller';
import { refusalOf, unauthorized } from './refusal';

export interface EntraOptions {
  readonly tenantId: string;
  readonly audiences: readonly string[];
  /** e.g. https://login.microsoftonline.com (no trailing slash). */
  readonly authority: string;
}

const what = 'Microsoft Entra ID token';

export type TokenVerifier = (token: string) => Promise<Caller>;

function entraIssuer(options: Pick<EntraOptions, 'authority' | 'tenantId'>): string {
  return `${options.authority}/${options.tenantId}/v2.0`;
}

function entraKeySetUrl(options: Pick<EntraOptions, 'authority' | 'tenantId'>): URL {
  return new URL(`${options.authority}/${options.tenantId}/discovery/v2.0/keys`);
}

function stringClaim(payload: JWTPayload, name: string): string | undefined {
  const value = payload[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The caller a verified token names: its object id, its Tallyho app roles, a name for audit lines. */
export function callerOfEntraClaims(payload: JWTPayload, kind: 'entra' | 'appService'): Caller {
  const oid = stringClaim(payload, 'oid');
  if (oid === undefined) throw unauthorized(`The ${what} names no object id (oid): ask for an access token for this app`);
  const roles = Array.isArray(payload.roles) ? payload.roles.filter((r): r is string => typeof r === 'string') : [];
  const name = stringClaim(payload, 'name') ?? stringClaim(payload, 'preferred_username') ?? stringClaim(payload, 'azp');
  return { id: `entra:${oid.toLowerCase()}`, kind, roles: rolesFromAppRoles(roles), ...(name === undefined ? {} : { name }) };
}

export function entraVerifier(options: EntraOptions): TokenVerifier {
  const keys = createRemoteJWKSet(entraKeySetUrl(options), {
    timeoutDuration: 5_000,
    cooldownDuration: 30_000,
    cacheMaxAge: 10 * 60_000,
  });
  const issuer = entraIssuer(options);
  return async (token) => {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer,
        audience: [...options.audiences],
        algorithms: ['RS256'],
        clockTolerance: 60,
        requiredClaims: ['exp', 'iat'],
      }));
    } catch (err) {
      throw refusalOf(err, what);
    }
    return callerOfEntraClaims(payload, 'entra');
  };
}
