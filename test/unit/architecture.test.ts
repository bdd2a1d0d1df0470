/**
 * docs/architecture.md's table of the edges between shared/'s folders is the one
 * .dependency-cruiser.cjs enforces (npm run lint): the rule `edge-from-<folder>` allows exactly the
 * folders the table lists for it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

interface Rule {
  readonly name: string;
  readonly to: { readonly pathNot?: readonly string[] };
}

const root = join(__dirname, '..', '..');
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the config is CommonJS, as dependency-cruiser loads it
const config = require(join(root, '.dependency-cruiser.cjs')) as { forbidden: readonly Rule[] };

function enforced(): Record<string, string[]> {
  const edges: Record<string, string[]> = {};
  for (const rule of config.forbidden) {
    const folder = /^edge-from-(\w+)$/.exec(rule.name)?.[1];
    if (folder === undefined) continue;
    const allowed = /^\^shared\/\(([\w|]+)\)\/$/.exec(rule.to.pathNot?.[0] ?? '')?.[1];
    if (allowed === undefined) throw new Error(`Rule ${rule.name} has an unexpected pathNot`);
    edges[folder] = allowed
      .split('|')
      .filter((f) => f !== folder)
      .sort();
  }
  return edges;
}

function documented(): Record<string, string[]> {
  const page = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');
  const edges: Record<string, string[]> = {};
  for (const line of page.split('\n')) {
    const cells = /^\| `(\w+)`\s*\|(.*)\|$/.exec(line);
    if (cells === null || cells[1] === 'app') continue;
    edges[cells[1] as string] = [...(cells[2] ?? '').matchAll(/`(\w+)`/g)].map((m) => m[1] as string).sort();
  }
  return edges;
}

describe('docs/architecture.md', () => {
  it('lists the edges between shared/ folders that dependency-cruiser enforces', () => {
    expect(Object.keys(enforced()).length).toBeGreaterThan(10);
    expect(documented()).toEqual(enforced());
  });
});
