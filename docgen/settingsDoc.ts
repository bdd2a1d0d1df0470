/**
 * What `npm run settings:sync` writes from the declarations (shared/app/settings.ts): the app
 * settings table of docs/configuration.md, local.settings.sample.json, and the list of settings
 * infra/app-settings.json leaves at their defaults. A test compares the committed files with these.
 */
import { connectionNames } from '../shared/app/settings';
import { markdownTable } from './markdownTable';
import type { Setting } from '../shared/settings';
import { hostSettings } from './hostSettings';
import { appSettings } from '../shared/app/settings';

/** Every declared setting, in the order of appSettings. */
export function declaredSettings(): Setting<unknown>[] {
  return Object.values(appSettings).flatMap((group) => Object.values<Setting<unknown>>(group.settings));
}

/** Defaults longer than this are spelled out in the meaning column, to keep the table readable. */
const defaultColumnWidth = 16;

function cells(setting: Setting<unknown>): [string, string, string] {
  const long = setting.text.length > defaultColumnWidth;
  const shown = setting.docDefault ?? (setting.text === '' ? '(none)' : long ? '(see meaning)' : `\`${setting.text}\``);
  const doc = long && setting.docDefault === undefined ? `${setting.doc}; default \`${setting.text}\`` : setting.doc;
  return [`\`${setting.env}\``, shown, doc.replaceAll('|', '\\|')];
}

function settingsTable(): string {
  return markdownTable(['setting', 'default', 'meaning'], declaredSettings().map(cells));
}

const tableMarkers = { begin: '<!-- settings:begin (npm run settings:sync) -->', end: '<!-- settings:end -->' } as const;

/** The page with its generated table replaced. */
export function withSettingsTable(page: string): string {
  const begin = page.indexOf(tableMarkers.begin);
  const end = page.indexOf(tableMarkers.end);
  if (begin < 0 || end < begin) throw new Error('docs/configuration.md has no settings markers');
  return `${page.slice(0, begin + tableMarkers.begin.length)}\n\n${settingsTable()}\n\n${page.slice(end)}`;
}

/** local.settings.sample.json: Azurite, the worker runtime, the host's settings, then every setting at its default. */
export function settingsSample(): string {
  const values: Record<string, string> = {
    [connectionNames.storage]: 'UseDevelopmentStorage=true',
    FUNCTIONS_WORKER_RUNTIME: 'node',
    ...hostSettings,
  };
  for (const setting of declaredSettings()) values[setting.env] = setting.text;
  return `${JSON.stringify({ IsEncrypted: false, Values: values, Host: { LocalHttpPort: 7071 } }, null, 2)}\n`;
}

interface InfraAppSettings {
  readonly $comment?: string;
  readonly settings: Readonly<Record<string, string>>;
  readonly hostSettings?: Readonly<Record<string, string>>;
  readonly appDefaults: readonly string[];
}

/**
 * infra/app-settings.json with `hostSettings` as the app's declarations decide them and
 * `appDefaults` listing every declared setting infra does not set.
 */
export function withInfraDefaults(text: string): string {
  const file = JSON.parse(text) as InfraAppSettings;
  const appDefaults = declaredSettings()
    .map((s) => s.env)
    .filter((name) => !(name in file.settings));
  return `${JSON.stringify({ $comment: file.$comment, settings: file.settings, hostSettings, appDefaults }, null, 2)}\n`;
}
