// Writes the deployment package's package.json (to the path given) from the repository's: what the
// Functions worker reads (`main`) and what names the app, and no dependencies — they are inside the
// bundle (scripts/build-app.mjs), and a remote build would only install them again. scripts/deploy.sh runs it.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const target = process.argv[2];
if (target === undefined) throw new Error('usage: node scripts/package-manifest.mjs <package.json to write>');
const repository = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8'));
const kept = ['name', 'version', 'private', 'description', 'license', 'main', 'engines'].filter((key) => key in repository);
writeFileSync(target, `${JSON.stringify(Object.fromEntries(kept.map((key) => [key, repository[key]])), null, 2)}\n`);
