/**
 * The app's settings as the host starts it (see settings.ts for precedence), written to the app's
 * process environment for the run and put back afterwards. It is the environment of Node's own
 * process object, which the app sees even when a test runner sandboxes ours.
 */
import type { HostLogger } from '../log';
import { nativeProcess } from '../core/nativeModule';
import { getSetting, type LocalSettings, mergeSettings, readLocalSettings } from './settings';

export interface AppEnvironment {
  readonly settings: Readonly<Record<string, string>>;
  readonly local: LocalSettings;
  /** The app's process environment (where WEBSITE_HOSTNAME goes too). */
  readonly env: NodeJS.ProcessEnv;
  /** Puts the environment back as it was. */
  restore(): void;
}

function apply(env: NodeJS.ProcessEnv, settings: Readonly<Record<string, string>>): () => void {
  const previous = new Map<string, string | undefined>();
  for (const [key, value] of Object.entries(settings)) {
    if (env[key] === value) continue;
    previous.set(key, env[key]);
    env[key] = value;
  }
  return () => {
    for (const [key, value] of previous) {
      if (value === undefined) Reflect.deleteProperty(env, key);
      else env[key] = value;
    }
  };
}

export function openEnvironment(
  appRoot: string,
  overrides: Readonly<Record<string, string | undefined>> | undefined,
  log: HostLogger,
): AppEnvironment {
  const local = readLocalSettings(appRoot);
  const env = nativeProcess().env;
  const { settings, skipped } = mergeSettings(local.values, env, overrides);
  for (const key of skipped)
    log('debug', `Skipping '${key}' from local settings as it's already defined in current environment variables.`);
  const runtime = getSetting(settings, 'FUNCTIONS_WORKER_RUNTIME');
  if (runtime !== undefined && runtime.toLowerCase() !== 'node')
    log('warn', `FUNCTIONS_WORKER_RUNTIME is "${runtime}"; the devhost runs Node.js apps only`);
  return { settings, local, env, restore: apply(env, settings) };
}
