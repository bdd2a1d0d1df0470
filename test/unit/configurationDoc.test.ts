import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { settingNames } from '../../shared/config';

// docs/configuration.md promises every setting with its default. The sample (checked against
// shared/config.ts by settingsSample.test.ts) is the source of truth; the page must agree with it.
const root = join(__dirname, '..', '..');
const sample = (JSON.parse(readFileSync(join(root, 'local.settings.sample.json'), 'utf8')) as { Values: Record<string, string> }).Values;
const page = readFileSync(join(root, 'docs', 'configuration.md'), 'utf8');

interface Row {
  readonly name: string;
  readonly cells: readonly string[];
}

/** Table rows whose first cell is one backticked setting name. */
const rows: Row[] = page
  .split('\n')
  .filter((line) => line.startsWith('| `'))
  .map((line) =>
    line
      .split(/(?<!\\)\|/)
      .slice(1, -1)
      .map((c) => c.trim()),
  )
  .map((cells) => ({ name: /^`([^`]+)`$/.exec(cells[0] ?? '')?.[1] ?? '', cells }))
  .filter((row) => row.name !== '');
const byName = new Map(rows.map((row) => [row.name, row]));

describe('docs/configuration.md', () => {
  it('lists every setting of local.settings.sample.json (but the worker runtime) and every TALLYHO_ setting the app reads', () => {
    const expected = [...Object.keys(sample), ...Object.values(settingNames).filter((n) => n.startsWith('TALLYHO_'))].filter(
      (n) => n !== 'FUNCTIONS_WORKER_RUNTIME',
    );
    expect([...new Set(expected)].filter((name) => !byName.has(name))).toEqual([]);
  });

  it('lists no TALLYHO_ setting the sample does not have', () => {
    expect(rows.map((r) => r.name).filter((name) => name.startsWith('TALLYHO_') && !(name in sample))).toEqual([]);
  });

  it('gives each app setting the default the sample has', () => {
    const wrong: string[] = [];
    for (const [name, value] of Object.entries(sample)) {
      const row = byName.get(name);
      if (row === undefined || !name.startsWith('TALLYHO_')) continue;
      const [, documented = '', meaning = ''] = row.cells;
      const fine =
        documented === `\`${value}\`` ||
        (documented === '(none)' && value === '') ||
        // A default too long for its column, or one the app does not have, is spelled out in the meaning.
        ((documented === '(see meaning)' || documented === '(required)') && meaning.includes(`\`${value}\``));
      if (!fine) wrong.push(`${name}: documented ${documented}, sample "${value}"`);
    }
    expect(wrong).toEqual([]);
  });
});
