/**
 * docs/jobs.md's table of failure codes is the list of codes the app assigns itself: each code that
 * shared/jobs/ writes on a failed item (a `failItems(…, '<code>', …)` call, or a `code: '<code>'` it
 * builds) is in the table, and the table names no code the app no longer uses.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..', '..');
const sources = (readdirSync(join(root, 'shared', 'jobs'), { recursive: true }) as string[])
  .filter((f) => f.endsWith('.ts'))
  // The OpenAPI examples (a worker's own `notAnImage`) and zod's issue codes are not the app's.
  .filter((f) => !['delivery/verdicts.ts', 'http/schemas.ts'].includes(f.replaceAll('\\', '/')))
  .map((f) => readFileSync(join(root, 'shared', 'jobs', f), 'utf8'))
  .join('\n');

const assigned = new Set([
  ...[...sources.matchAll(/failItems\(\s*[^,]+,\s*[^,]+,\s*'([a-zA-Z]+)'/g)].map((m) => m[1]),
  ...[...sources.matchAll(/\bcode: '([a-zA-Z]+)'/g)].map((m) => m[1]),
]);

const page = readFileSync(join(root, 'docs', 'jobs.md'), 'utf8');
const section = page.slice(page.indexOf('## Failure codes'), page.indexOf('## How it works'));
const documented = new Set([...section.matchAll(/^\| `([a-zA-Z]+)` +\|/gm)].map((m) => m[1]));

describe('failure codes (docs/jobs.md#failure-codes)', () => {
  it('the table lists exactly the codes shared/jobs assigns', () => {
    expect(assigned.size).toBeGreaterThanOrEqual(6);
    expect([...documented].sort()).toEqual([...assigned].sort());
  });
});
