/**
 * The app's settings: every group its capabilities declare (each in its own `settings.ts`), under
 * the key the composition root reads it by. docs/configuration.md, local.settings.sample.json and
 * infra/app-settings.json list them in this order (`npm run settings:sync`).
 */
import { loadConfig, readSettings, type SettingsSource } from '../config';
import { AppError } from '../errors';
// Each group straight from its capability's settings.ts, and each connection from its connection.ts
// (a front door for declarations: .dependency-cruiser.cjs), not from the capabilities' index.ts: the
// docs tools and the tests read the declarations without loading every capability and the storage
// and Service Bus SDKs (about half a second of CPU per jest test file that only reads settings).
import { billingSettings } from '../billing/settings';
import { callerSettings } from '../callers/settings';
import { counterSettings } from '../counters/settings';
import { durableSettings } from '../durable/settings';
import { gateSettings } from '../gates/settings';
import { httpSettings } from '../http/settings';
import { identitySettings } from '../identity/settings';
import { jobSettings } from '../jobs/settings';
import { readServiceBusConnection, serviceBusConnectionName } from '../messaging/connection';
import { occSettings } from '../retry';
import { scheduleSettings } from '../schedules/settings';
import { sequenceSettings } from '../sequences/settings';
import { group } from '../settings';
import { signingSettings } from '../signing/settings';
import { readStorageConnection, storageConnectionName } from '../storage/connection';
import { storageRetrySettings } from '../storage/settings';
import { streamSettings } from '../streams/settings';
import { telemetrySettings } from '../telemetry/settings';

export const appSettings = {
  http: httpSettings,
  identity: identitySettings,
  callers: callerSettings,
  storageRetry: storageRetrySettings,
  signing: signingSettings,
  occ: occSettings,
  sequences: sequenceSettings,
  counters: counterSettings,
  streams: streamSettings,
  gates: gateSettings,
  schedules: scheduleSettings,
  jobs: jobSettings,
  billing: billingSettings,
  durable: durableSettings,
  telemetry: telemetrySettings,
} as const;

/** The connection settings' names (the Functions host reads the same ones for the bindings). */
export const connectionNames = { storage: storageConnectionName, serviceBus: serviceBusConnectionName } as const;

/** The connections, each read by its owner: storage (required) and Service Bus (optional). */
function appConnections(source: SettingsSource) {
  return { storage: readStorageConnection(source), serviceBus: readServiceBusConnection(source) };
}

type Env = Readonly<Record<string, string | undefined>>;

/** The connections and every setting, validated: one ConfigurationInvalid names every bad one. */
export function loadAppConfig(env: Env = process.env) {
  const { storage, ...config } = loadConfig(appSettings, appConnections, env);
  // readStorageConnection reports a missing connection as a problem, so loadConfig has thrown.
  if (storage === undefined) throw new AppError('Internal', 'No storage connection and no problem reported');
  return { ...config, storage };
}

export type AppConfig = ReturnType<typeof loadAppConfig>;

/**
 * The groups the registrations read when the app loads (timer schedules, queue names, the jobs body
 * limit): the host indexes functions before any request, so a bad one of these fails the load.
 */
export function registrationSettings(env: Env = process.env) {
  // Of the http group, only the sweep's schedule: a bad body limit answers requests with a problem, as any other setting.
  const sweep = group({ idempotencySweepSchedule: httpSettings.settings.idempotencySweepSchedule });
  // Of the identity group, only the mode: it decides the auth level each route is registered with.
  const identity = group({ mode: identitySettings.settings.mode });
  // Of the streams group, only the sweep's schedule (as for http).
  const streams = group({ sweepSchedule: streamSettings.settings.sweepSchedule });
  return readSettings({ http: sweep, identity, counters: counterSettings, schedules: scheduleSettings, jobs: jobSettings, streams }, env);
}

export type RegistrationSettings = ReturnType<typeof registrationSettings>;
