/** How callers are identified (shared/settings.ts explains the declarations; docs/security.md "Callers" the model). */
import { custom, group, list, SettingProblems, type SettingsOf } from '../settings';
import { parseSigningKey } from '../signing/signer';
import { type AuthMode, parseRoles, type Roles } from './caller';

export type { AuthMode } from './caller';

const modes: readonly AuthMode[] = ['keys', 'entra', 'keys+entra'];

function mode(text: string): AuthMode | SettingProblems {
  const found = modes.find((m) => m === text.toLowerCase());
  return found ?? new SettingProblems([`"${text}" is not one of ${modes.join(', ')}`]);
}

function roles(text: string): Roles | SettingProblems {
  const entries = text
    .split(/[,;]/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const parsed = parseRoles(entries);
  return 'unknown' in parsed
    ? new SettingProblems(parsed.unknown.map((e) => `"${e}" is not a role (admin, submitter, worker:* or worker:<processor>)`))
    : parsed;
}

/** Never echoes the value. */
function credentialsKey(text: string): Buffer | undefined | SettingProblems {
  const key = parseSigningKey(text);
  return typeof key === 'string' ? new SettingProblems([key]) : key;
}

/** An https authority, or http on this machine (tests serve a key set locally). */
function authority(text: string): string | SettingProblems {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return new SettingProblems([`"${text}" is not a URL`]);
  }
  const local = url.hostname === '127.0.0.1' || url.hostname === 'localhost';
  if (url.protocol !== 'https:' && !(local && url.protocol === 'http:')) {
    return new SettingProblems([`"${text}" must be https (http only for 127.0.0.1 or localhost)`]);
  }
  return text.replace(/\/+$/, '');
}

/** A directory (tenant) id: v2 tokens name their issuer by it, never by a domain. */
const tenantPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const identitySettings = group(
  {
    mode: custom(
      'TALLYHO_AUTH_MODE',
      'keys',
      'keys',
      'who opens the door: `keys`, `entra` or `keys+entra` (docs/security.md "Modes")',
      mode,
    ),
    keyCallerRoles: custom(
      'TALLYHO_KEY_CALLER_ROLES',
      { admin: false, submitter: true, workerOf: '*' },
      'submitter,worker:*',
      'roles of a function-key caller who presents no credential (`key:shared`); empty: a credential is required',
      roles,
    ),
    entraTenantId: custom('TALLYHO_ENTRA_TENANT_ID', '', '', 'Microsoft Entra directory (tenant) id whose tokens are accepted', (text) =>
      tenantPattern.test(text) ? text : new SettingProblems([`"${text}" is not a directory (tenant) id (a GUID)`]),
    ),
    entraAudiences: list('TALLYHO_ENTRA_AUDIENCES', [], "accepted token audiences: the app registration's client id (and its App ID URI)"),
    entraAuthority: custom(
      'TALLYHO_ENTRA_AUTHORITY',
      'https://login.microsoftonline.com',
      'https://login.microsoftonline.com',
      'Entra authority host: tokens must come from `<authority>/<tenant>/v2.0`, keys from its JWKS',
      authority,
    ),
    credentialsKey: custom(
      'TALLYHO_CREDENTIALS_KEY',
      undefined as Buffer | undefined,
      '',
      'base64, ≥ 32 bytes: signs caller credentials (unset: none is issued or accepted; a new key revokes them all)',
      credentialsKey,
    ),
    credentialsRevoked: list('TALLYHO_CREDENTIALS_REVOKED', [], 'ids (`jti`) of caller credentials no longer accepted'),
  },
  (values, report, names) => {
    if (values.mode === 'keys') return;
    if (values.entraTenantId === '') report(names.entraTenantId, `required when ${names.mode} is ${values.mode}`);
    if (values.entraAudiences.length === 0) report(names.entraAudiences, `required when ${names.mode} is ${values.mode}`);
  },
);

export type IdentitySettings = SettingsOf<typeof identitySettings>;
