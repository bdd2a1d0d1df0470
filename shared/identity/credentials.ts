/**
 * Caller credentials: what an admin issues to each client app or worker where no Microsoft Entra ID
 * is in play ("one admin-issued credential per worker", docs/security.md "Callers"). The host does
 * not tell the app which function key a caller used (devhost/docs/real-host.md#what-the-worker-learns-about-the-caller),
 * so a key cannot name a caller; a credential does, on every host.
 *
 * A credential is `tly1.` and a JWT signed HS256 with TALLYHO_CREDENTIALS_KEY (its own key: rotating
 * it revokes every credential at once), issuer and audience `tallyho`, naming the caller (`sub`),
 * its roles and its id (`jti`). It is checked with the signature first, so a forged or junk credential
 * costs no storage read; then against the revocations (`DELETE /api/callers/{name}`: a stored row,
 * cached briefly, shared/callers/revocations.ts) and TALLYHO_CREDENTIALS_REVOKED.
 */
import { randomUUID } from 'node:crypto';

import { type JWTPayload, jwtVerify, SignJWT } from 'jose';

import { callerNamePattern } from '../names';
import { type Caller, formatRoles, parseRoles, type Roles } from './caller';
import { refusalOf, unauthorized } from './refusal';
import { systemClock } from '../clock';

export const credentialPrefix = 'tly1.';
const issuer = 'tallyho';
const audience = 'tallyho';
const what = 'Tallyho credential';

export interface IssuedCredential {
  /** The credential's id (`jti`): what TALLYHO_CREDENTIALS_REVOKED lists to revoke it. */
  readonly id: string;
  /** Shown once to the admin who issues it; the app keeps no copy. */
  readonly credential: string;
  readonly expiresAt?: string;
}

export interface CredentialRequest {
  /** The caller's name: its id is `cred:<name>`. */
  readonly name: string;
  readonly roles: Roles;
  /** Unset: valid until revoked or the key changes. */
  readonly expiresInSeconds?: number;
}

export async function issueCredential(
  key: Buffer,
  request: CredentialRequest,
  now: Date = new Date(systemClock.now()),
): Promise<IssuedCredential> {
  if (!callerNamePattern.test(request.name)) throw new Error(`"${request.name}" is not a caller name`);
  const id = randomUUID();
  const iat = Math.floor(now.getTime() / 1000);
  const exp = request.expiresInSeconds === undefined ? undefined : iat + request.expiresInSeconds;
  let jwt = new SignJWT({ roles: formatRoles(request.roles) })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(issuer)
    .setAudience(audience)
    .setSubject(request.name)
    .setJti(id)
    .setIssuedAt(iat);
  if (exp !== undefined) jwt = jwt.setExpirationTime(exp);
  const signed = await jwt.sign(key);
  return {
    id,
    credential: `${credentialPrefix}${signed}`,
    ...(exp === undefined ? {} : { expiresAt: new Date(exp * 1000).toISOString() }),
  };
}

export interface CredentialOptions {
  readonly key: Buffer | undefined;
  readonly revoked: readonly string[];
  /** Whether a credential id was revoked through `DELETE /api/callers/{name}` (shared/callers: a stored row, briefly cached). */
  readonly isRevoked?: (id: string) => Promise<boolean>;
}

/** Seconds a credential is still accepted past its `exp` (or before its `iat`): the clocks of instances and issuers differ. */
export const credentialClockToleranceSeconds = 60;

export function credentialVerifier(options: CredentialOptions): (credential: string) => Promise<Caller> {
  const revoked = new Set(options.revoked);
  return async (credential) => {
    const key = options.key;
    if (key === undefined) throw unauthorized(`This deployment accepts no ${what}s (TALLYHO_CREDENTIALS_KEY is not set)`);
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(credential.slice(credentialPrefix.length), key, {
        issuer,
        audience,
        algorithms: ['HS256'],
        clockTolerance: credentialClockToleranceSeconds,
        requiredClaims: ['sub', 'jti', 'iat'],
      }));
    } catch (err) {
      throw refusalOf(err, what);
    }
    const name = payload.sub ?? '';
    const id = payload.jti ?? '';
    if (revoked.has(id) || (options.isRevoked !== undefined && (await options.isRevoked(id)))) {
      throw unauthorized(`This ${what} has been revoked`);
    }
    const roles = parseRoles(Array.isArray(payload.roles) ? payload.roles.filter((r): r is string => typeof r === 'string') : []);
    if ('unknown' in roles || !callerNamePattern.test(name)) throw unauthorized(`The ${what} is not one this app issues`);
    return { id: `cred:${name}`, kind: 'credential', roles, name };
  };
}
