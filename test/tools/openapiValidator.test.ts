/**
 * The OpenAPI document the app serves is valid OpenAPI 3.1, by @seriousme/openapi-schema-validator's
 * own CLI (the package is ESM-only, so it runs as a process of its own — hence the tools project).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { capabilityTags, documentedRoutes } from '../../shared/app/routes';
import { buildOpenApiDocument } from '../../shared/openapi/document';

const validatorCli = join(__dirname, '..', '..', 'node_modules', '@seriousme', 'openapi-schema-validator', 'bin', 'validate-api-cli.js');

function validate(doc: unknown): unknown {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-'));
  const file = join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(doc));
  try {
    return JSON.parse(execFileSync(process.execPath, [validatorCli, file], { encoding: 'utf8' }));
  } catch (err) {
    const stdout = (err as { stdout?: string }).stdout;
    return stdout === undefined || stdout === '' ? { error: String(err) } : JSON.parse(stdout);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the generated document is valid OpenAPI 3.1 (@seriousme/openapi-schema-validator)', () => {
  const document = buildOpenApiDocument(documentedRoutes(), {
    title: 'Tallyho',
    version: '1.0.0',
    description: 'test',
    serverUrl: '/api',
    tags: capabilityTags,
  });
  expect(document.openapi).toMatch(/^3\.1\./);
  expect(validate(document)).toEqual({ valid: true });
  // The check bites: the same document without its required `info` is refused.
  const { info: _info, ...withoutInfo } = document;
  expect(validate(withoutInfo)).toMatchObject({ valid: false });
});
