/**
 * The App Service Authentication principal: the `x-ms-client-principal` header that App Service
 * sets after it validated a caller's Microsoft Entra token. Trusted only where App Service says its
 * authentication is on (WEBSITE_AUTH_ENABLED, set by the platform), because there the platform
 * removes such headers from outside requests
 * (https://learn.microsoft.com/azure/app-service/configure-authentication-user-identities). Anywhere
 * else — the devhost, a local real host, any host without it — the header is whatever the caller
 * sent: the real host passed a forged one to the app (devhost/docs/real-host.md#what-the-worker-learns-about-the-caller),
 * and `@azure/functions` turned it into `request.user`. The app never reads `request.user`.
 */
import type { Caller, HeaderReader } from './caller';
import { callerOfEntraClaims } from './entra';
import { unauthorized } from './refusal';

const objectIdClaim = 'http://schemas.microsoft.com/identity/claims/objectidentifier';

interface PrincipalClaim {
  readonly typ: string;
  readonly val: string;
}

function claimsOf(decoded: unknown): { claims: readonly PrincipalClaim[]; roleType: string } | undefined {
  if (typeof decoded !== 'object' || decoded === null) return undefined;
  const { claims, role_typ: roleType } = decoded as { claims?: unknown; role_typ?: unknown };
  if (!Array.isArray(claims)) return undefined;
  const valid = claims.filter(
    (c): c is PrincipalClaim =>
      typeof c === 'object' && c !== null && typeof (c as PrincipalClaim).typ === 'string' && typeof (c as PrincipalClaim).val === 'string',
  );
  return { claims: valid, roleType: typeof roleType === 'string' ? roleType : 'roles' };
}

/** The caller App Service authenticated, or undefined when the request carries no principal. */
export function platformPrincipal(headers: HeaderReader): Caller | undefined {
  const header = headers.get('x-ms-client-principal');
  if (header === null || header === '') return undefined;
  if ((headers.get('x-ms-client-principal-idp') ?? '').toLowerCase() !== 'aad') {
    throw unauthorized('Only Microsoft Entra ID sign-ins are accepted from App Service Authentication');
  }
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(header, 'base64').toString('utf8'));
  } catch {
    throw unauthorized('The App Service principal cannot be read');
  }
  const parsed = claimsOf(decoded);
  if (parsed === undefined) throw unauthorized('The App Service principal cannot be read');
  const values = (type: string) => parsed.claims.filter((c) => c.typ === type).map((c) => c.val);
  const oid = values(objectIdClaim)[0] ?? values('oid')[0];
  const name = values('name')[0] ?? values('preferred_username')[0];
  return callerOfEntraClaims(
    { ...(oid === undefined ? {} : { oid }), roles: values(parsed.roleType), ...(name === undefined ? {} : { name }) },
    'appService',
  );
}
