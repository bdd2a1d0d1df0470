/**
 * Generated blocks of the docs (between `<!-- BEGIN:… -->` and `<!-- END:… -->` markers, written by
 * the sync scripts): what a page holds there and what a generator makes, as table cells, so
 * Prettier's column padding does not count.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A markdown table's rows of trimmed cells (an escaped `\|` stays inside its cell; the rule row is left out). */
export function tableCells(markdown: string): string[][] {
  return markdown
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|[\s|:-]+\|$/.test(line))
    .map((line) => line.split(/(?<!\\)\|/).map((c) => c.trim()));
}

/** The cells of the block of `docs/<page>` between `block`'s markers; throws when the page lacks them. */
export function docBlockCells(page: string, block: { readonly begin: string; readonly end: string }): string[][] {
  const text = readFileSync(join(__dirname, '..', '..', 'docs', page), 'utf8');
  const start = text.indexOf(block.begin);
  const end = text.indexOf(block.end);
  if (start < 0 || end < start) throw new Error(`docs/${page} lacks the markers ${block.begin} … ${block.end}`);
  return tableCells(text.slice(start, end));
}
