/**
 * The settings' generated documents: docs/configuration.md's table, local.settings.sample.json and
 * infra/app-settings.json's list of defaults are what `npm run settings:sync` writes from the
 * declarations (shared/<capability>/settings.ts), and what they say is true of the reader.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { loadAppConfig } from '../../shared/app/settings';
import { withDeclarationTable } from '../../docgen/declarationDoc';
import { declaredSettings, settingsSample, withInfraDefaults, withSettingsTable } from '../../docgen/settingsDoc';

const root = join(__dirname, '..', '..');
const read = (name: string): string => readFileSync(join(root, name), 'utf8');
const sample = (JSON.parse(read('local.settings.sample.json')) as { Values: Record<string, string> }).Values;

describe('settings documents, generated from the declarations', () => {
  it('docs/configuration.md, local.settings.sample.json and infra/app-settings.json are current (npm run settings:sync)', () => {
    expect(read('docs/configuration.md')).toBe(withSettingsTable(read('docs/configuration.md')));
    expect(read('local.settings.sample.json')).toBe(settingsSample());
    expect(read('infra/app-settings.json')).toBe(withInfraDefaults(read('infra/app-settings.json')));
    // The table of a processor declaration's fields, from its schema (limits and defaults).
    expect(read('docs/jobs.md')).toBe(withDeclarationTable(read('docs/jobs.md')));
    expect(read('docs/jobs.md')).toMatch(/\| `leaseSeconds` +\| external +\| integer 5–3,600 +\| `60` /);
  });

  it('every setting is declared once, under a TALLYHO_ name', () => {
    const names = declaredSettings().map((s) => s.env);
    expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
    expect(names.filter((name) => !/^TALLYHO_[A-Z0-9_]+$/.test(name))).toEqual([]);
  });

  it('the sample gives each setting its default value', () => {
    expect(loadAppConfig(sample)).toEqual(loadAppConfig({ AzureWebJobsStorage: 'UseDevelopmentStorage=true' }));
  });

  it('every value infra sets in Azure (infra/app-settings.json) is a declared setting and valid for it', () => {
    const infra = (JSON.parse(read('infra/app-settings.json')) as { settings: Record<string, string> }).settings;
    const byName = new Map(declaredSettings().map((s) => [s.env, s]));
    for (const [name, value] of Object.entries(infra)) {
      expect({ [name]: byName.get(name)?.schema.safeParse(value).success }).toEqual({ [name]: true });
    }
  });

  it("each declared default is valid against the setting's own type and bounds", () => {
    for (const setting of declaredSettings()) {
      if (setting.text === '') continue;
      expect({ [setting.env]: setting.schema.safeParse(setting.text).success }).toEqual({ [setting.env]: true });
    }
  });
});
