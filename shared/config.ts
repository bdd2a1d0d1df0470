/**
 * Reads settings: the connection settings, declared here, and the groups each capability declares
 * in its own `settings.ts` (shared/settings.ts), handed in by the composition root (shared/app/).
 * Nothing here imports a capability. The connection settings use exactly the names the Functions
 * host reads for bindings (`AzureWebJobsStorage`, `AzureWebJobsStorage__*`, `ServiceBusConnection__*`),
 * so one setting serves the triggers and the SDK clients.
 *
 * Every missing or malformed setting is reported by name at once, in one ConfigurationInvalid.
 */
import { AppError } from './errors';
import { namesOf, type Setting, type SettingsGroup, type SettingsOf } from './settings';

type Env = Readonly<Record<string, string | undefined>>;

/** Azurite's well-known development account (public, documented; not a secret). */
export const devStorageAccount = {
  name: 'devstoreaccount1',
  key: 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==',
} as const;

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

export type ServiceBusConnection =
  | { readonly kind: 'connectionString'; readonly setting: string; readonly connectionString: string }
  | {
      readonly kind: 'identity';
      readonly setting: string;
      readonly fullyQualifiedNamespace: string;
      readonly managedIdentity: boolean;
      readonly clientId: string | undefined;
    };

/** The connection settings' names (the Functions host reads the same ones for the bindings). */
export const connectionNames = { storage: 'AzureWebJobsStorage', serviceBus: 'ServiceBusConnection' } as const;

export interface Connections {
  readonly storage: StorageConnection;
  /** Undefined when no Service Bus is configured; features that publish to it then stay local. */
  readonly serviceBus: ServiceBusConnection | undefined;
}

/** Groups of declared settings by the key their values are composed under (`config.<key>`). */
type Groups = Readonly<Record<string, SettingsGroup<object>>>;

export type SettingsOfGroups<G extends Groups> = { readonly [K in keyof G]: SettingsOf<G[K]> };

/** The connections and every group's values. */
export type Config<G extends Groups> = Connections & SettingsOfGroups<G>;

/** Collects problems so one failure message can name every bad setting. */
class SettingsReader {
  readonly problems: string[] = [];

  constructor(readonly env: Env) {}

  raw(name: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  }

  string(name: string, fallback: string, pattern: RegExp): string {
    const value = this.raw(name) ?? fallback;
    if (!pattern.test(value)) this.problems.push(`${name}: "${value}" does not match ${String(pattern)}`);
    return value;
  }

  url(name: string, requireHttps: boolean): string | undefined {
    const text = this.raw(name);
    if (text === undefined) return undefined;
    try {
      const url = new URL(text);
      if (requireHttps && url.protocol !== 'https:') this.problems.push(`${name}: must be an https URL`);
      return text.replace(/\/+$/, '');
    } catch {
      this.problems.push(`${name}: "${text}" is not a URL`);
      return undefined;
    }
  }

  /** One group's values: each setting read on its own (its default when unset), then the group's own checks. */
  group<T extends object>(settings: SettingsGroup<T>): T {
    const values: Record<string, unknown> = {};
    for (const [key, setting] of Object.entries<Setting<unknown>>(settings.settings)) {
      const text = this.raw(setting.env);
      if (text === undefined) {
        values[key] = setting.fallback;
        continue;
      }
      const result = setting.schema.safeParse(text);
      if (result.success) values[key] = result.data;
      else {
        for (const issue of result.error.issues) this.problems.push(`${setting.env}: ${issue.message}`);
        values[key] = setting.fallback;
      }
    }
    const read = values as T;
    settings.check?.(read, (env, message) => this.problems.push(`${env}: ${message}`), namesOf(settings));
    return read;
  }

  groups<G extends Groups>(groups: G): SettingsOfGroups<G> {
    return Object.fromEntries(Object.entries(groups).map(([key, settings]) => [key, this.group(settings)])) as SettingsOfGroups<G>;
  }

  /** Throws one ConfigurationInvalid naming every bad setting found. */
  failOnProblems(): void {
    if (this.problems.length === 0) return;
    throw new AppError('ConfigurationInvalid', `Invalid settings:\n  - ${this.problems.join('\n  - ')}`, {
      extra: { settings: this.problems.map((p) => p.slice(0, p.indexOf(':'))) },
    });
  }
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

function storageFromConnectionString(setting: string, text: string, r: SettingsReader): StorageConnection | undefined {
  const parts = parseConnectionString(text);
  if (parts.get('usedevelopmentstorage')?.toLowerCase() === 'true') {
    const proxy = (parts.get('developmentstorageproxyuri') ?? 'http://127.0.0.1').replace(/\/+$/, '');
    const at = (port: number): string => `${proxy}:${port}/${devStorageAccount.name}`;
    return {
      setting,
      accountName: devStorageAccount.name,
      endpoints: { blob: at(10000), queue: at(10001), table: at(10002) },
      credential: { kind: 'sharedKey', accountName: devStorageAccount.name, accountKey: devStorageAccount.key },
    };
  }
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
    r.problems.push(`${setting}: the connection string names no AccountName and not every service endpoint`);
    return undefined;
  }
  let credential: StorageCredentialSettings;
  if (accountName !== undefined && accountKey !== undefined) {
    credential = { kind: 'sharedKey', accountName, accountKey };
  } else if (sas !== undefined) {
    credential = { kind: 'sas', token: sas.replace(/^\?/, '') };
  } else {
    r.problems.push(`${setting}: the connection string has neither AccountName+AccountKey nor SharedAccessSignature`);
    return undefined;
  }
  return {
    setting,
    accountName: accountName ?? new URL(blob).hostname.split('.')[0] ?? 'account',
    endpoints: { blob, queue, table },
    credential,
  };
}

function isManagedIdentity(r: SettingsReader, prefix: string): boolean {
  const credential = r.raw(`${prefix}__credential`);
  if (credential === undefined) return false;
  if (credential.toLowerCase() !== 'managedidentity') {
    r.problems.push(`${prefix}__credential: "${credential}" is not supported (use managedidentity, or leave it unset)`);
    return false;
  }
  return true;
}

/**
 * A storage connection named `setting`: a connection string in `setting`, or identity-based
 * settings `setting__accountName` / `setting__{blob,queue,table}ServiceUri` with optional
 * `__credential=managedidentity` and `__clientId` (a user-assigned identity).
 */
function readStorageConnection(r: SettingsReader, setting: string): StorageConnection | undefined {
  const text = r.raw(setting);
  if (text !== undefined) return storageFromConnectionString(setting, text, r);
  const accountName = r.string(`${setting}__accountName`, '', /^([a-z0-9]{3,24})?$/);
  const uri = (service: keyof StorageEndpoints): string | undefined =>
    r.url(`${setting}__${service}ServiceUri`, true) ??
    (accountName === '' ? undefined : `https://${accountName}.${service}.core.windows.net`);
  const blob = uri('blob') ?? r.url(`${setting}__serviceUri`, true);
  const queue = uri('queue');
  const table = uri('table');
  if (blob === undefined || queue === undefined || table === undefined) {
    r.problems.push(
      `${setting}: not set. Set it to a connection string (UseDevelopmentStorage=true with Azurite), ` +
        `or set ${setting}__accountName (or ${setting}__blobServiceUri, __queueServiceUri and __tableServiceUri) for identity-based access`,
    );
    return undefined;
  }
  return {
    setting,
    accountName: accountName === '' ? (new URL(blob).hostname.split('.')[0] ?? 'account') : accountName,
    endpoints: { blob, queue, table },
    credential: { kind: 'identity', managedIdentity: isManagedIdentity(r, setting), clientId: r.raw(`${setting}__clientId`) },
  };
}

/** Optional: a Service Bus connection string in `setting`, or `setting__fullyQualifiedNamespace`. */
function readServiceBusConnection(r: SettingsReader, setting: string): ServiceBusConnection | undefined {
  const text = r.raw(setting);
  if (text !== undefined) {
    if (!/endpoint=sb:\/\//i.test(text)) r.problems.push(`${setting}: not a Service Bus connection string (no Endpoint=sb://…)`);
    return { kind: 'connectionString', setting, connectionString: text };
  }
  const namespace = r.string(`${setting}__fullyQualifiedNamespace`, '', /^([A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+)?$/);
  if (namespace === '') return undefined;
  return {
    kind: 'identity',
    setting,
    fullyQualifiedNamespace: namespace,
    managedIdentity: isManagedIdentity(r, setting),
    clientId: r.raw(`${setting}__clientId`),
  };
}

/**
 * Settings groups alone, validated, without the connections: the timer and queue registrations
 * need theirs when the app loads, before (and without) a storage connection.
 */
export function readSettings<G extends Groups>(groups: G, env: Env = process.env): SettingsOfGroups<G> {
  const r = new SettingsReader(env);
  const values = r.groups(groups);
  r.failOnProblems();
  return values;
}

/** One group alone, validated. */
export function readGroup<T extends object>(settings: SettingsGroup<T>, env: Env = process.env): T {
  return readSettings({ group: settings }, env).group;
}

/** The connections and every group, validated together: one error names every bad setting. */
export function loadConfig<G extends Groups>(groups: G, env: Env = process.env): Config<G> {
  const r = new SettingsReader(env);
  const storage = readStorageConnection(r, connectionNames.storage);
  const serviceBus = readServiceBusConnection(r, connectionNames.serviceBus);
  const values = r.groups(groups);
  r.failOnProblems();
  // readStorageConnection reports a missing connection as a problem, so failOnProblems has thrown.
  if (storage === undefined) throw new AppError('Internal', 'No storage connection and no problem reported');
  return { ...values, storage, serviceBus };
}
