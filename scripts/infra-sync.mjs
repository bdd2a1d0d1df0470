// Writes infra/app-resources.json from shared/resources.ts (through the compiled manifest), so Bicep
// provisions exactly the resources the app names. Run after adding a table, queue, container or
// Service Bus entity: `npm run infra:sync` (it builds first).
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { resourceManifest, invalidResourceNames } = require(join(root, 'dist/shared/resourceManifest.js'));

const manifest = resourceManifest();
const problems = invalidResourceNames(manifest);
if (problems.length > 0) {
  console.error(`Names Azure would reject:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
const file = join(root, 'infra/app-resources.json');
const comment = 'Generated from shared/resources.ts by `npm run infra:sync`; do not edit by hand.';
writeFileSync(file, `${JSON.stringify({ $comment: comment, ...manifest }, null, 2)}\n`);
console.log(`wrote ${file}`);
