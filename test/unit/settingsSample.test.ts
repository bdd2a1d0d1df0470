import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { loadConfig, settingNames } from '../../shared/config';

// The sample is what users copy to local.settings.json and what the e2e suite runs with, and the
// README says it lists every setting with its default: both halves are checked here.
const sample = (
  JSON.parse(readFileSync(join(__dirname, '..', '..', 'local.settings.sample.json'), 'utf8')) as {
    Values: Record<string, string>;
  }
).Values;

describe('local.settings.sample.json', () => {
  it('names every TALLYHO_ setting the app reads', () => {
    const appSettings = Object.values(settingNames).filter((name) => name.startsWith('TALLYHO_'));
    const missing = appSettings.filter((name) => !(name in sample));
    expect(missing).toEqual([]);
  });

  it('names no setting the app does not read', () => {
    const known = new Set<string>([...Object.values(settingNames), 'FUNCTIONS_WORKER_RUNTIME', 'TALLYHO_TASK_HUB']);
    expect(Object.keys(sample).filter((name) => !known.has(name))).toEqual([]);
  });

  it('gives each setting its default value', () => {
    expect(loadConfig(sample)).toEqual(loadConfig({ AzureWebJobsStorage: 'UseDevelopmentStorage=true' }));
  });
});
