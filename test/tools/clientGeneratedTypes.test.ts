/**
 * The client's types are generated from the OpenAPI document the app serves. This fails when a route
 * or schema changed and `npm run generate` (in clients/typescript) was not run afterwards. It reads
 * the document from the root build, which `npm test` makes before jest runs: so it is a tools test
 * (a script over the build), not one of the client's pure unit tests, which `npm run test:fast` runs
 * without a build.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

test('src/generated/openapi.ts matches the served OpenAPI document', () => {
  const script = join(__dirname, '..', '..', 'clients', 'typescript', 'scripts', 'generate-types.mjs');
  const run = spawnSync(process.execPath, [script, '--check'], { encoding: 'utf8' });
  expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
}, 120_000);
