/**
 * The app's names, in two namespaces that cannot meet (DESIGN principle 10, docs/security.md
 * "Namespace map"):
 *
 * - **Caller names** — the names callers choose for sequences, counters, gates, runs, schedules and
 *   stream types — are `callerNamePattern`: letters, digits, `-`, `_` and `.`, never ending in `.`,
 *   and never `:` or a space. Callers' Idempotency-Keys are printable ASCII without spaces.
 * - **The app's own ids** carry a mark no caller input can: a Durable instance id the app derives
 *   for itself has the form `<owner>:<parts>` (a `:`, which no caller name has), and an idempotency
 *   key the app derives for itself has the form `<owner> <parts>` (a space, which no caller key has).
 *   A caller's name may be one of the parts; it can never be the whole id.
 *
 * Reserved names (the app's own stream types, queues and topics) are compared after
 * `normalisedName`: case folded, compatibility forms and trailing dots removed, because some stores
 * compare that way (Service Bus entity names are case-insensitive; Azure's blob naming rules forbid
 * a path segment that ends with a dot, which a service may trim).
 *
 * The Azure naming rules of every store a name lands in are here too (`azureNameRules`), each with
 * its source; resourceManifest.ts checks the app's own resource names against them, and the edge
 * schemas are built so every caller name satisfies the rules of the stores it reaches.
 */

/** 1-63 letters, digits, `-`, `_`, `.`; starts with a letter or digit; does not end with `.`. */
export const callerNamePattern = /^[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,61}[A-Za-z0-9_-])?$/;

/** The rule as a caller reads it (the 400 message and the OpenAPI description). */
export const callerNameRule = 'Use 1-63 letters, digits, "-", "_" or ".", starting with a letter or digit and not ending with "."';

/** Who derives an internal id: the first part of it. */
export type AppOwner = 'gate' | 'gate-run' | 'schedule-run' | 'streams';

/** A Durable instance id the app derives for itself: `<owner>:<part>:…`. */
export function appInstanceId(owner: AppOwner, ...parts: readonly (string | number)[]): string {
  return [owner, ...parts.map(String)].join(':');
}

/**
 * Whether an instance id has the app's own form. Every caller-chosen instance id (a schedule's id)
 * is a caller name, and caller names have no `:`, so none passes this.
 */
export function isAppInstanceId(id: string): boolean {
  return id.includes(':');
}

/** An idempotency key the app derives for itself: `<owner> <part>:…` (see the module comment). */
export function appKey(owner: AppOwner, ...parts: readonly (string | number)[]): string {
  return `${owner} ${parts.map(String).join(':')}`;
}

/** Whether a key has the app's own form: callers' keys are printable ASCII without spaces. */
export function isAppKey(key: string): boolean {
  return key.includes(' ');
}

/**
 * A name as the stores that compare loosely see it: Unicode compatibility forms folded (NFKC), case
 * folded, trailing dots dropped. Two names with the same normalised form must be treated as one
 * wherever one of them is reserved.
 */
export function normalisedName(name: string): string {
  return name.normalize('NFKC').toLowerCase().replace(/\.+$/, '');
}

/** Whether `name` is one of `reserved` once both are normalised. */
export function isReservedName(name: string, reserved: Iterable<string>): boolean {
  const wanted = normalisedName(name);
  for (const own of reserved) if (normalisedName(own) === wanted) return true;
  return false;
}

export interface AzureNameRule {
  /** What it names, e.g. "storage queue". */
  readonly store: string;
  readonly pattern: RegExp;
  /** The rule in words, for the namespace map. */
  readonly rule: string;
  /** Where Azure states it. */
  readonly source: string;
}

const storageNaming = 'https://learn.microsoft.com/rest/api/storageservices/naming-and-referencing-containers--blobs--and-metadata';
const queueNaming = 'https://learn.microsoft.com/rest/api/storageservices/naming-queues-and-metadata';
const tableNaming = 'https://learn.microsoft.com/rest/api/storageservices/understanding-the-table-service-data-model';
const serviceBusNaming = 'https://learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules#microsoftservicebus';
const durableIds =
  'https://learn.microsoft.com/azure/azure-functions/durable/durable-functions-orchestrations#orchestration-identity; ' +
  'https://github.com/Azure/azure-functions-durable-extension/blob/dev/src/WebJobs.Extensions.DurableTask/ContextImplementations/DurableClient.cs (IsInvalidCharacter)';

/** Azure's naming rules for the stores the app writes names into. */
/* eslint-disable no-control-regex -- several rules are about control characters */
export const azureNameRules = {
  table: {
    store: 'table',
    pattern: /^[A-Za-z][A-Za-z0-9]{2,62}$/,
    rule: '3-63 letters and digits, starting with a letter',
    source: tableNaming,
  },
  tableKey: {
    store: 'table PartitionKey / RowKey',
    // At most 1 KiB; no `/`, `\`, `#`, `?` or control characters (U+0000-U+001F, U+007F-U+009F).
    pattern: /^[^/\\#?\u0000-\u001f\u007f-\u009f]{0,512}$/,
    rule: 'up to 1 KiB, without "/", "\\", "#", "?" or control characters',
    source: tableNaming,
  },
  queue: {
    store: 'storage queue',
    pattern: /^(?!.*--)[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/,
    rule: '3-63 lower-case letters, digits and single hyphens, starting and ending with a letter or digit',
    source: queueNaming,
  },
  container: {
    store: 'blob container',
    pattern: /^(?!.*--)[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/,
    rule: '3-63 lower-case letters, digits and single hyphens, starting and ending with a letter or digit',
    source: storageNaming,
  },
  blobSegment: {
    store: 'blob path segment',
    // Blob names are case-sensitive; no segment may be empty, `.`, `..` or end with a dot.
    pattern: /^(?!\.{1,2}$)[^/\\\u0000-\u001f\u007f-\u009f]{1,254}(?<!\.)$/,
    rule: '1-254 characters, no "/", "\\" or control characters, not ending with "."',
    source: storageNaming,
  },
  instanceId: {
    store: 'Durable instance id',
    // The extension refuses more than 256 characters (MaxInstanceIdLength); the docs ask for at most 100.
    pattern: /^(?!@)[^/\\#?\u0000-\u001f\u007f-\u009f]{1,256}$/,
    rule: '1-256 characters (the documentation recommends 100), not starting with "@", without "/", "\\", "#", "?" or control characters',
    source: durableIds,
  },
  entityKey: {
    store: 'Durable entity key',
    pattern: /^[^/\\#?\u0000-\u001f\u007f-\u009f]{1,250}$/,
    rule: 'without "/", "\\", "#", "?" or control characters (the key is part of an instance id, `@<entity>@<key>`)',
    source: durableIds,
  },
  serviceBusEntity: {
    store: 'Service Bus queue or topic',
    pattern: /^[A-Za-z0-9]([A-Za-z0-9._/-]{0,258}[A-Za-z0-9])?$/,
    rule: '1-260 letters, digits, ".", "_", "-", "/", starting and ending with a letter or digit; case-insensitive',
    source: serviceBusNaming,
  },
  serviceBusSubscription: {
    store: 'Service Bus subscription',
    pattern: /^[A-Za-z0-9]([A-Za-z0-9._-]{0,48}[A-Za-z0-9])?$/,
    rule: '1-50 letters, digits, ".", "_", "-", starting and ending with a letter or digit',
    source: serviceBusNaming,
  },
} as const satisfies Record<string, AzureNameRule>;
/* eslint-enable no-control-regex */

export type AzureStore = keyof typeof azureNameRules;
