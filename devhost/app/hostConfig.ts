/**
 * host.json as the devhost reads it: one schema for every section it uses (HTTP, storage queues and
 * the Durable extension), with the real host's defaults and the bounds its options classes check at
 * start, so a host.json the real host refuses stops the devhost too (devhost/docs/real-host.md#hostjson).
 *
 * Values come from JSON or from `AzureFunctionsJobHost__…` overrides (strings), so numbers and
 * TimeSpans are read from either, and keys match without regard to case, as .NET configuration binds
 * them. Absent, null and '' mean "not set" (an override may set a key to '').
 */
import { availableParallelism } from 'node:os';

import * as z from 'zod';

import { type JsonObject, loadHostJson, parseTimeSpanMs } from './hostJson';
import { type Settings } from './settings';
import { DevhostError } from '../errors';

/** Renames an object's keys to the schema's spelling when they differ only in case. */
function canonicalKeys(names: readonly string[]): (value: unknown) => unknown {
  const byLower = new Map(names.map((n) => [n.toLowerCase(), n]));
  return (value) => {
    if (value === undefined || value === null) return {};
    if (typeof value !== 'object' || Array.isArray(value)) return value;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [byLower.get(k.toLowerCase()) ?? k, v]));
  };
}

function section<S extends z.ZodRawShape>(shape: S) {
  return z
    .unknown()
    .optional()
    .transform(canonicalKeys(Object.keys(shape)))
    .pipe(z.looseObject(shape));
}

type Read<T> = { readonly value: T } | { readonly refusal: string };

/** A value `read` takes from the raw one (undefined when not set), or an issue with its refusal. */
function field<T>(read: (raw: unknown) => Read<T>) {
  return z
    .unknown()
    .optional()
    .transform((raw, ctx): T | undefined => {
      if (raw === undefined || raw === null || raw === '') return undefined;
      const result = read(raw);
      if ('value' in result) return result.value;
      ctx.addIssue({ code: 'custom', message: `${result.refusal} (got ${JSON.stringify(raw)})` });
      return z.NEVER;
    });
}

function integer(min: number, max?: number) {
  return field((raw): Read<number> => {
    const n = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
    if (Number.isInteger(n) && n >= min && (max === undefined || n <= max)) return { value: n };
    return { refusal: max === undefined ? `must be an integer, ${min} or more` : `must be an integer from ${min} to ${max}` };
  });
}

/** A .NET TimeSpan (`[d.]hh:mm:ss[.fff]`) or a number of milliseconds, within the bounds. */
function timeSpanMs(ok: (ms: number) => boolean, refusal: string) {
  return field((raw): Read<number> => {
    const ms = typeof raw === 'number' ? raw : typeof raw === 'string' ? parseTimeSpanMs(raw) : undefined;
    if (ms === undefined) return { refusal: 'must be a TimeSpan like "00:00:30"' };
    return ok(ms) ? { value: ms } : { refusal };
  });
}

/** A string; numbers and booleans read as their text. Unlike numbers, '' is a value (an empty route prefix). */
const text = z
  .unknown()
  .optional()
  .transform((v, ctx): string | undefined => {
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return String(v);
    ctx.addIssue({ code: 'custom', message: `must be a string (got ${JSON.stringify(v)})` });
    return z.NEVER;
  });

/**
 * `extensions.queues`, with the Storage extension's rules (azure-sdk-for-net
 * sdk/storage/Microsoft.Azure.WebJobs.Extensions.Storage.Common/src/Shared/Queues/QueuesOptions.cs):
 * batchSize 1–32 (Azure Queues hands out at most 32 messages a call), newBatchThreshold 0 or more
 * (default batchSize/2 × processors, outside the Consumption plan), maxPollingInterval at least
 * 100 ms, maxDequeueCount at least 1.
 */
const queues = section({
  batchSize: integer(1, 32).transform((n) => n ?? 16),
  newBatchThreshold: integer(0),
  maxPollingInterval: timeSpanMs((ms) => ms >= 100, 'must not be less than 00:00:00.1').transform((ms) => ms ?? 60_000),
  // The extension takes any TimeSpan; the queue service refuses a negative visibility timeout.
  visibilityTimeout: timeSpanMs((ms) => ms >= 0, 'must not be negative').transform((ms) => ms ?? 0),
  maxDequeueCount: integer(1).transform((n) => n ?? 5),
  messageEncoding: field((raw): Read<'base64' | 'none'> =>
    typeof raw === 'string' && /^(base64|none)$/i.test(raw)
      ? { value: raw.toLowerCase() as 'base64' | 'none' }
      : { refusal: 'must be "base64" or "none"' },
  ).transform((e) => e ?? 'base64'),
}).transform((q) => ({
  batchSize: q.batchSize,
  newBatchThreshold: q.newBatchThreshold ?? Math.floor(q.batchSize / 2) * availableParallelism(),
  maxPollingIntervalMs: q.maxPollingInterval,
  visibilityTimeoutMs: q.visibilityTimeout,
  maxDequeueCount: q.maxDequeueCount,
  messageEncoding: q.messageEncoding,
}));

const hubNamePattern = /^[A-Za-z][A-Za-z0-9]{2,44}$/;

/**
 * `extensions.durableTask`: what the devhost uses (hub name, storage connection, concurrency), and
 * the bounds the extension checks at start for settings the devhost has no use for
 * (azure-functions-durable-extension src/WebJobs.Extensions.DurableTask/Options/DurableTaskOptions.cs
 * and AzureStorageOptions.cs; a controlQueueBatchSize above 32 kept the real host from starting:
 * devhost/docs/real-host.md#hostjson). Concurrency left unset takes the engine's defaults.
 */
const durableTask = section({
  hubName: text
    .transform((h) => h ?? 'TestHubName')
    .refine((h) => hubNamePattern.test(h), {
      error: (issue) =>
        `Task hub name '${String(issue.input)}' should contain only alphanumeric characters, start with a letter, and have length between 3 and 45.`,
    }),
  maxConcurrentActivityFunctions: integer(1),
  maxConcurrentOrchestratorFunctions: integer(1),
  maxConcurrentEntityFunctions: integer(1),
  maxEntityOperationBatchSize: integer(1),
  // An int the extension does not check (DurableTaskOptions.Validate); the devhost reads above 0 as on.
  entityMessageReorderWindowInMinutes: integer(-(2 ** 31), 2 ** 31 - 1),
  storageProvider: section({
    connectionName: text,
    connectionStringName: text,
    controlQueueBatchSize: integer(1, 32),
    partitionCount: integer(1, 16),
    controlQueueBufferThreshold: integer(1, 1000),
    controlQueueVisibilityTimeout: timeSpanMs((ms) => ms >= 60_000 && ms <= 3_600_000, 'must be between 1 and 60 minutes'),
    maxQueuePollingInterval: timeSpanMs((ms) => ms > 0, 'must be more than zero'),
  }),
});

const hostJsonSchema = section({
  extensions: section({
    http: section({ routePrefix: text.transform((p) => p ?? 'api') }),
    queues,
    durableTask,
  }),
});

type Extensions = z.output<typeof hostJsonSchema>['extensions'];
type QueuesConfig = Extensions['queues'];
export type DurableTaskConfig = Extensions['durableTask'];

/** What the devhost reads from host.json, checked and with defaults applied. */
export interface HostConfig {
  /** host.json as the host applies it (overrides and `%Setting%` resolved), for sections the devhost does not read. */
  readonly json: Readonly<JsonObject>;
  readonly routePrefix: string;
  readonly queues: QueuesConfig;
  readonly durableTask: DurableTaskConfig;
}

/** Checks host.json; each value the real host would refuse is named in one DevhostError (SettingsInvalid). */
export function parseHostConfig(json: JsonObject): HostConfig {
  const parsed = hostJsonSchema.safeParse(json);
  if (!parsed.success) {
    throw new DevhostError(
      'SettingsInvalid',
      parsed.error.issues.map((issue) => `host.json ${issue.path.join('.')}: ${issue.message}`).join('; '),
    );
  }
  const { http, queues: queueConfig, durableTask: durable } = parsed.data.extensions;
  return { json, routePrefix: http.routePrefix, queues: queueConfig, durableTask: durable };
}

/** Reads the app's host.json (loadHostJson applies overrides and `%Setting%`) and checks it. */
export function readHostConfig(appRoot: string, settings: Settings): HostConfig {
  return parseHostConfig(loadHostJson(appRoot, settings));
}
