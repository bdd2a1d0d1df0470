/**
 * docs/architecture.md's tables are the ones .dependency-cruiser.cjs enforces (npm run lint):
 *
 * - the edges between shared/'s folders: the rule `edge-from-<folder>` allows exactly the folders the
 *   table lists for it;
 * - the capabilities and their front doors: a `front-door-of-<capability>` rule for each and no
 *   other, and each one's `index.ts` exports the factory the table names.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

interface Rule {
  readonly name: string;
  readonly to: { readonly pathNot?: readonly string[] | string };
}

const root = join(__dirname, '..', '..');
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the config is CommonJS, as dependency-cruiser loads it
const config = require(join(root, '.dependency-cruiser.cjs')) as { forbidden: readonly Rule[] };
const page = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');

function enforced(): Record<string, string[]> {
  const edges: Record<string, string[]> = {};
  for (const rule of config.forbidden) {
    const folder = /^edge-from-(\w+)$/.exec(rule.name)?.[1];
    if (folder === undefined) continue;
    const pathNot = Array.isArray(rule.to.pathNot) ? rule.to.pathNot : [rule.to.pathNot];
    const allowed = /^\^shared\/\(([\w|]+)\)\/$/.exec(pathNot[0] ?? '')?.[1];
    if (allowed === undefined) throw new Error(`Rule ${rule.name} has an unexpected pathNot`);
    edges[folder] = allowed
      .split('|')
      .filter((f) => f !== folder)
      .sort();
  }
  return edges;
}

/** The rows of the table that follows the `<!-- marker … -->` comment: its cells, backticks kept. */
function tableAfter(marker: string): string[][] {
  const lines = page.split('\n');
  const start = lines.findIndex((line) => line.startsWith(`<!-- ${marker}:`));
  if (start < 0) throw new Error(`docs/architecture.md has no <!-- ${marker}: … --> table`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === '') {
      if (rows.length > 0) break;
      continue;
    }
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
    );
  }
  return rows.slice(2);
}

const ticked = (cell: string): string[] => [...cell.matchAll(/`(\w+)`/g)].map((m) => m[1] as string);

function documentedEdges(): Record<string, string[]> {
  const edges: Record<string, string[]> = {};
  for (const [folder, allowed] of tableAfter('edges')) {
    const name = ticked(folder ?? '')[0];
    if (name === undefined || name === 'app') continue;
    edges[name] = ticked(allowed ?? '').sort();
  }
  return edges;
}

describe('docs/architecture.md', () => {
  it('lists the edges between shared/ folders that dependency-cruiser enforces', () => {
    expect(Object.keys(enforced()).length).toBeGreaterThan(10);
    expect(documentedEdges()).toEqual(enforced());
  });

  it('lists the capabilities whose front doors dependency-cruiser enforces, each with the factory its index.ts exports', () => {
    const rows = tableAfter('front doors').map(([capability, door]) => [ticked(capability ?? '')[0], ticked(door ?? '')[0]] as const);
    const ruled = config.forbidden.flatMap((rule) => /^front-door-of-(\w+)$/.exec(rule.name)?.[1] ?? []);
    expect(ruled.length).toBeGreaterThan(5);
    expect(rows.map(([capability]) => capability).sort()).toEqual([...ruled].sort());
    for (const [capability, factory] of rows) {
      const index = readFileSync(join(root, 'shared', capability as string, 'index.ts'), 'utf8');
      expect({ capability, exports: new RegExp(`export (function ${factory}\\b|\\{[^}]*\\bas ${factory}\\b)`).test(index) }).toEqual({
        capability,
        exports: true,
      });
    }
  });
});
