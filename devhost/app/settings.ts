/**
 * App settings as the Functions host sees them. Precedence (highest first), as Core Tools does it:
 * explicit overrides (`startHost({ env })`), then the process environment, then
 * `local.settings.json` `Values` — Core Tools skips a local setting that the environment already
 * defines ("Skipping 'X' from local settings as it's already defined in current environment
 * variables"), which is also what lets a test harness override any setting.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DevhostError } from '../errors';

export type Settings = Readonly<Record<string, string | undefined>>;

export interface LocalSettings {
  readonly values: Readonly<Record<string, string>>;
  /** `Host.CORS`: comma-separated origins or `*`. */
  readonly cors: string | undefined;
  readonly corsCredentials: boolean;
  readonly localHttpPort: number | undefined;
}

function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** Reads `local.settings.json` (absent file: no settings). Values are stringified like the host does. */
export function readLocalSettings(appRoot: string): LocalSettings {
  const file = join(appRoot, 'local.settings.json');
  if (!existsSync(file)) return { values: {}, cors: undefined, corsCredentials: false, localHttpPort: undefined };
  let parsed: unknown;
  try {
    parsed = JSON.parse(stripBom(readFileSync(file, 'utf8')));
  } catch (err) {
    throw new DevhostError('SettingsInvalid', `${file} is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  const root = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  if (root.IsEncrypted === true)
    throw new DevhostError('SettingsInvalid', `${file} is encrypted (IsEncrypted: true); the devhost reads plain settings only`);
  const values: Record<string, string> = {};
  const rawValues = root.Values;
  if (typeof rawValues === 'object' && rawValues !== null) {
    for (const [key, value] of Object.entries(rawValues as Record<string, unknown>)) {
      if (value === null || value === undefined) continue;
      values[key] = typeof value === 'string' ? value : JSON.stringify(value);
    }
  }
  const host = typeof root.Host === 'object' && root.Host !== null ? (root.Host as Record<string, unknown>) : {};
  const port = Number(host.LocalHttpPort);
  return {
    values,
    cors: typeof host.CORS === 'string' && host.CORS.trim() !== '' ? host.CORS : undefined,
    corsCredentials: host.CORSCredentials === true || String(host.CORSCredentials).toLowerCase() === 'true',
    localHttpPort: Number.isInteger(port) && port > 0 ? port : undefined,
  };
}

export interface MergedSettings {
  readonly settings: Record<string, string>;
  /** Local settings the environment already defined (so they were not applied). */
  readonly skipped: readonly string[];
}

export function mergeSettings(
  local: Readonly<Record<string, string>>,
  environment: Readonly<Record<string, string | undefined>>,
  overrides: Readonly<Record<string, string | undefined>> = {},
): MergedSettings {
  const settings: Record<string, string> = {};
  const skipped: string[] = [];
  for (const [key, value] of Object.entries(local)) settings[key] = value;
  for (const [key, value] of Object.entries(environment)) {
    if (value === undefined) continue;
    if (key in local && local[key] !== value) skipped.push(key);
    settings[key] = value;
  }
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) delete settings[key];
    else settings[key] = value;
  }
  return { settings, skipped };
}

/** Looks a setting up by name, case-insensitively (Windows-style, as the host's configuration does). */
export function getSetting(settings: Settings, name: string): string | undefined {
  const exact = settings[name];
  if (exact !== undefined) return exact;
  const lower = name.toLowerCase();
  for (const [key, value] of Object.entries(settings)) if (key.toLowerCase() === lower) return value;
  return undefined;
}

/**
 * Resolves `%Name%` app-setting expressions (`%%` is a literal percent sign). An unset setting is
 * an error naming it and where it was used, as the host reports it at start-up.
 */
export function resolveSettingExpressions(value: string, settings: Settings, where: string): string {
  return value.replace(/%%|%([^%]+)%/g, (_whole, name: string | undefined) => {
    if (name === undefined) return '%';
    const resolved = getSetting(settings, name.trim());
    if (resolved === undefined)
      throw new DevhostError('SettingsInvalid', `${where}: '%${name}%' does not resolve to a value (app setting ${name} is not set)`);
    return resolved;
  });
}

/**
 * `AzureWebJobs.<name>.Disabled` set to true (or 1) disables a function, as on the real host. Shells
 * cannot export a name with dots, so `AzureWebJobs__<name>__Disabled` is accepted too.
 */
export function isFunctionDisabled(settings: Settings, functionName: string): boolean {
  const value =
    getSetting(settings, `AzureWebJobs.${functionName}.Disabled`) ?? getSetting(settings, `AzureWebJobs__${functionName}__Disabled`);
  return value !== undefined && /^(true|1)$/i.test(value.trim());
}
