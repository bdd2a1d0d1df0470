/**
 * The bundles' characters outside ASCII written as `\u` escapes (scripts/build-app.mjs
 * `finishBundle`): in regular expressions, strings and names, which then mean the same, with the
 * source map's columns moved past them; never in a template, where a tagged one's raw text would change.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInThisContext } from 'node:vm';

import { encode } from '@jridgewell/sourcemap-codec';

const buildApp = join(__dirname, '..', '..', 'scripts', 'build-app.mjs');

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tallyho-ascii-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Writes `code` with a map of one segment per given generated column (row 0), runs finishBundle on them. */
function escape(code: string, columns: readonly number[]): { status: number | null; stderr: string; code: string; map: SourceMap } {
  const jsFile = join(dir, 'bundle.js');
  const mapFile = `${jsFile}.map`;
  writeFileSync(jsFile, code);
  // Generated column c maps to column c of line 0 of the source, so a lookup shows where it came from.
  const mappings = encode([columns.map((c) => [c, 0, 0, c] as [number, number, number, number])]);
  writeFileSync(mapFile, JSON.stringify({ version: 3, sources: ['source.ts'], names: [], mappings }));
  const script = `const { finishBundle } = await import(${JSON.stringify(buildApp)}); finishBundle(${JSON.stringify(jsFile)});`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  return {
    status: run.status,
    stderr: run.stderr,
    code: readFileSync(jsFile, 'utf8'),
    map: new SourceMap(JSON.parse(readFileSync(mapFile, 'utf8')) as SourceMapPayload),
  };
}

/** Runs `code` as a CommonJS module body; its module. */
function run(code: string): { exports: Record<string, unknown> } {
  const module = { exports: {} };
  (runInThisContext(`(function (module) {\n${code}\n})`) as (m: typeof module) => void)(module);
  return module;
}

test('escapes regular expressions, strings and names, which then mean the same, and moves the map past each escape', () => {
  const code = "var Ä = /^[ÄÖ]+$/i, s = 'é', e = /[\\p{L}’]+/gu; module.exports = { Ä, s, e, after: 1 };";
  const after = code.indexOf('after');
  const { status, stderr, code: escaped, map } = escape(code, [0, after]);
  expect({ status, stderr }).toEqual({ status: 0, stderr: '' });
  expect(escaped).toMatch(/^[\x20-\x7e]*$/);
  // Six characters escaped before `after`, each now six characters long.
  const moved = escaped.indexOf('after');
  expect(moved).toBe(after + 6 * 5);
  expect(map.findEntry(0, moved)).toMatchObject({ originalLine: 0, originalColumn: after });
  const module = run(escaped);
  const original = run(code);
  const { Ä: re, s, e } = module.exports as { Ä: RegExp; s: string; e: RegExp };
  expect({ s, matches: re.test('ÖÄ'), words: 'naïve’s café'.match(e) }).toEqual({
    s: original.exports.s,
    matches: (original.exports.Ä as RegExp).test('ÖÄ'),
    words: 'naïve’s café'.match(original.exports.e as RegExp),
  });
});

test('stops at a character outside ASCII in a template, where a tagged one would read the raw text', () => {
  const { status, stderr, code } = escape('module.exports = String.raw`Ä`;', [0]);
  expect(status).not.toBe(0);
  expect(stderr).toMatch(/a character outside ASCII in a template at offset \d+/);
  expect(code).toBe('module.exports = String.raw`Ä`;');
});
