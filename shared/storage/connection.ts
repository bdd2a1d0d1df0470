/**
 * The storage connection: `AzureWebJobsStorage`, the name the Functions host reads for the storage
 * bindings, so one setting serves the triggers and the SDK clients. It is a connection string
 * (`UseDevelopmentStorage=true` for Azurite, an account key or a SAS), or identity-based settings
 * `AzureWebJobsStorage__accountName` / `__{blob,queue,table}ServiceUri` with optional
 * `__credential=managedidentity` and `__clientId` (a user-assigned identity). Nothing here touches
 * the network; storage/clients.ts builds the clients from what this reads.
 */
import type { SettingsSource } from '../config';

/** Azurite's well-known development account (public, documented; not a secret). */
export const devStorageAccount = {
  name: 'devstoreaccount1',
  key: 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==',
} as const;

/** The storage connection's setting (the Functions host reads the same one for the bindings). */
export const storageConnectionName = 'AzureWebJobsStorage';

interface StorageEndpoints {
  readonly blob: string;
  readonly queue: string;
  readonly table: string;
}

type StorageCredentialSettings =
  | { readonly kind: 'sharedKey'; readonly accountName: string; readonly accountKey: string }
  | { readonly kind: 'sas'; readonly token: string }
  | { readonly kind: 'identity'; readonly managedIdentity: boolean; readonly clientId: string | undefined };

export interface StorageConnection {
  /** The setting the connection came from, for messages. */
  readonly setting: string;
  readonly accountName: string;
  readonly endpoints: StorageEndpoints;
  readonly credential: StorageCredentialSettings;
}

function parseConnectionString(text: string): Map<string, string> {
  const parts = new Map<string, string>();
  for (const segment of text.split(';')) {
    const at = segment.indexOf('=');
    if (at <= 0) continue;
    parts.set(segment.slice(0, at).trim().toLowerCase(), segment.slice(at + 1).trim());
  }
  return parts;
}

function developmentStorage(setting: string, parts: Map<string, string>): StorageConnection {
  const proxy = (parts.get('developmentstorageproxyuri') ?? 'http://127.0.0.1').replace(/\/+$/, '');
  const at = (port: number): string => `${proxy}:${port}/${devStorageAccount.name}`;
  return {
    setting,
    accountName: devStorageAccount.name,
    endpoints: { blob: at(10000), queue: at(10001), table: at(10002) },
    credential: { kind: 'sharedKey', accountName: devStorageAccount.name, accountKey: devStorageAccount.key },
  };
}

function storageFromConnectionString(setting: string, text: string, source: SettingsSource): StorageConnection | undefined {
  const parts = parseConnectionString(text);
  if (parts.get('usedevelopmentstorage')?.toLowerCase() === 'true') return developmentStorage(setting, parts);
  const accountName = parts.get('accountname');
  const accountKey = parts.get('accountkey');
  const sas = parts.get('sharedaccesssignature');
  const protocol = parts.get('defaultendpointsprotocol') ?? 'https';
  const suffix = parts.get('endpointsuffix') ?? 'core.windows.net';
  const endpoint = (key: string, service: string): string | undefined =>
    parts.get(`${key}endpoint`)?.replace(/\/+$/, '') ??
    (accountName === undefined ? undefined : `${protocol}://${accountName}.${service}.${suffix}`);
  const blob = endpoint('blob', 'blob');
  const queue = endpoint('queue', 'queue');
  const table = endpoint('table', 'table');
  if (blob === undefined || queue === undefined || table === undefined) {
    source.problem(`${setting}: the connection string names no AccountName and not every service endpoint`);
    return undefined;
  }
  let credential: StorageCredentialSettings;
  if (accountName !== undefined && accountKey !== undefined) {
    credential = { kind: 'sharedKey', accountName, accountKey };
  } else if (sas !== undefined) {
    credential = { kind: 'sas', token: sas.replace(/^\?/, '') };
  } else {
    source.problem(`${setting}: the connection string has neither AccountName+AccountKey nor SharedAccessSignature`);
    return undefined;
  }
  return {
    setting,
    accountName: accountName ?? new URL(blob).hostname.split('.')[0] ?? 'account',
    endpoints: { blob, queue, table },
    credential,
  };
}

/** `<prefix>__credential`: unset (the default credential chain) or `managedidentity`; anything else is reported. */
export function isManagedIdentity(source: SettingsSource, prefix: string): boolean {
  const credential = source.raw(`${prefix}__credential`);
  if (credential === undefined) return false;
  if (credential.toLowerCase() !== 'managedidentity') {
    source.problem(`${prefix}__credential: "${credential}" is not supported (use managedidentity, or leave it unset)`);
    return false;
  }
  return true;
}

/** The storage connection (see the top of this file); undefined, with the problem reported, when there is none. */
export function readStorageConnection(source: SettingsSource, setting: string = storageConnectionName): StorageConnection | undefined {
  const text = source.raw(setting);
  if (text !== undefined) return storageFromConnectionString(setting, text, source);
  const accountName = source.string(`${setting}__accountName`, '', /^([a-z0-9]{3,24})?$/);
  const uri = (service: keyof StorageEndpoints): string | undefined =>
    source.url(`${setting}__${service}ServiceUri`, true) ??
    (accountName === '' ? undefined : `https://${accountName}.${service}.core.windows.net`);
  const blob = uri('blob') ?? source.url(`${setting}__serviceUri`, true);
  const queue = uri('queue');
  const table = uri('table');
  if (blob === undefined || queue === undefined || table === undefined) {
    source.problem(
      `${setting}: not set. Set it to a connection string (UseDevelopmentStorage=true with Azurite), ` +
        `or set ${setting}__accountName (or ${setting}__blobServiceUri, __queueServiceUri and __tableServiceUri) for identity-based access`,
    );
    return undefined;
  }
  return {
    setting,
    accountName: accountName === '' ? (new URL(blob).hostname.split('.')[0] ?? 'account') : accountName,
    endpoints: { blob, queue, table },
    credential: { kind: 'identity', managedIdentity: isManagedIdentity(source, setting), clientId: source.raw(`${setting}__clientId`) },
  };
}
