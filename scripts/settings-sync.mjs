// Writes the settings tables and lists from the declarations (shared/<capability>/settings.ts,
// composed in shared/app/settings.ts, through the build): the app settings table of
// docs/configuration.md, local.settings.sample.json and infra/app-settings.json's `appDefaults`; and the
// table of a processor declaration's fields in docs/jobs.md (from its schema, docgen/declarationDoc.ts).
// Run after adding or changing a setting: `npm run settings:sync` (it builds first).
// `--check` writes nothing and exits 1 when a file is not current (test/unit/settingsDoc.test.ts checks the same).
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { withSettingsTable, settingsSample, withInfraDefaults } = require(join(root, 'dist/docgen/settingsDoc.js'));
const { withDeclarationTable } = require(join(root, 'dist/docgen/declarationDoc.js'));

const files = [
  ['docs/configuration.md', withSettingsTable],
  ['local.settings.sample.json', () => settingsSample()],
  ['infra/app-settings.json', withInfraDefaults],
  ['docs/jobs.md', withDeclarationTable],
];

const check = process.argv.includes('--check');
let stale = 0;
for (const [name, render] of files) {
  const path = join(root, name);
  const current = readFileSync(path, 'utf8');
  const wanted = render(current);
  if (current === wanted) continue;
  if (check) {
    console.error(`${name} is not current: run \`npm run settings:sync\``);
    stale++;
  } else {
    writeFileSync(path, wanted);
    console.log(`wrote ${name}`);
  }
}
process.exit(stale === 0 ? 0 : 1);
