/**
 * The client pages (docs/client-typescript.md, docs/client-dotnet.md) as programs, so a test can
 * compile and run their examples exactly as printed. A page's runnable examples are its fences of
 * the page's language with nothing after the language (`ts`, `csharp`; `csharp sketch` is not run).
 * The block under "## Quick start" is a whole program of its own; the blocks after it, in page
 * order, make a second one: the first of them (the client's set-up) at the top level, every other
 * one in a scope of its own (`{ … }`), so two examples may both name a `gate`. Import and using
 * directives cannot stand inside a scope, so they are hoisted to the top, each once.
 *
 * CommonJS, so the client-package artifacts (test/support/artifacts.cjs) build the pages' programs
 * before jest runs; clientPages.d.cts gives its types.
 */
const { readFileSync } = require('node:fs');
const { join } = require('node:path');

const directive = {
  ts: /^import .* from '[^']+';$/,
  csharp: /^using [\w.]+;$/,
};

/** The page's fences of `language`, each with where it starts. */
function blocks(markdown, language) {
  return [...markdown.matchAll(new RegExp('^```' + language + '\\n([\\s\\S]*?)^```$', 'gm'))].map((m) => ({
    offset: m.index,
    code: m[1] ?? '',
  }));
}

/** The `##` and `###` headings of a page, in order. */
function headings(markdown) {
  return markdown.split('\n').filter((line) => /^#{2,3} /.test(line));
}

/** Where the line holding exactly `heading` starts, or -1. */
function headingAt(markdown, heading) {
  const escaped = heading.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${escaped}$`, 'm').exec(markdown)?.index ?? -1;
}

/** The first block of `language` after the heading. */
function blockAfter(markdown, heading, language) {
  const at = headingAt(markdown, heading);
  const block = blocks(markdown, language).find((b) => b.offset > at);
  if (at < 0 || block === undefined) throw new Error(`no ${language} block after "${heading}"`);
  return block.code;
}

function program(parts, language) {
  const hoisted = new Set();
  const bodies = parts.map((code, i) => {
    const lines = code.split('\n');
    for (const line of lines) if (directive[language].test(line)) hoisted.add(line);
    const body = lines.filter((line) => !directive[language].test(line)).join('\n');
    return i === 0 ? body : `{\n${body}\n}`;
  });
  return [...hoisted, '', ...bodies].join('\n');
}

function pagePrograms(markdown, language) {
  const all = blocks(markdown, language);
  const at = headingAt(markdown, '## Quick start');
  const first = all.findIndex((b) => b.offset > at);
  const quickStart = all[first];
  if (at < 0 || quickStart === undefined) throw new Error(`the page has no ${language} block under "## Quick start"`);
  const rest = all.slice(first + 1).map((b) => b.code);
  if (rest.length === 0) throw new Error(`the page has no ${language} block after its quick start`);
  return { quickStart: program([quickStart.code], language), rest: program(rest, language) };
}

function readPage(repoRoot, page) {
  return readFileSync(join(repoRoot, page), 'utf8');
}

module.exports = { blockAfter, headings, pagePrograms, readPage };
