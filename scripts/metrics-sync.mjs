// Writes docs/operations.md's metric and span lists from the declarations (shared/<capability>/metrics.ts,
// listed in docgen/telemetryCatalog.ts, through the build). Run after adding or changing an
// instrument or a span: `npm run metrics:sync` (it builds first).
// `--check` writes nothing and exits 1 when the page is not current (test/unit/telemetry/catalog.test.ts checks the same).
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { withTelemetryTables } = require(join(root, 'dist/docgen/metricsDoc.js'));

const path = join(root, 'docs/operations.md');
const current = readFileSync(path, 'utf8');
const wanted = withTelemetryTables(current);
if (current === wanted) process.exit(0);
if (process.argv.includes('--check')) {
  console.error('docs/operations.md is not current: run `npm run metrics:sync`');
  process.exit(1);
}
writeFileSync(path, wanted);
console.log('wrote docs/operations.md');
