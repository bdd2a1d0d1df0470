// Writes the generated blocks of docs/security.md from the code (through the build): the
// authorization table (shared/http/authorization.ts), the namespace map (docgen/namespace.ts) and the
// fair-share table (docgen/sharesDoc.ts).
// Run after adding a route or an id the app derives: `npm run security:sync` (it builds first).
// `--check` writes nothing and exits 1 when the page is not current (the unit tests check the same).
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { authorizationBlock, authorizationMarkdown } = require(join(root, 'dist/docgen/authorizationDoc.js'));
const { defaultNamespaceContext, namespaceBlock, namespaceMarkdown } = require(join(root, 'dist/docgen/namespace.js'));
const { documentedRoutes } = require(join(root, 'dist/shared/app/routes.js'));
const { sharesBlock, sharesMarkdown } = require(join(root, 'dist/docgen/sharesDoc.js'));

const blocks = [
  [authorizationBlock, authorizationMarkdown(documentedRoutes())],
  [namespaceBlock, namespaceMarkdown(defaultNamespaceContext())],
  [sharesBlock, sharesMarkdown()],
];

const page = join(root, 'docs', 'security.md');
let text = readFileSync(page, 'utf8');
for (const [block, markdown] of blocks) {
  const start = text.indexOf(block.begin);
  const end = text.indexOf(block.end);
  if (start < 0 || end < start) throw new Error(`docs/security.md lacks the markers ${block.begin} … ${block.end}`);
  text = `${text.slice(0, start + block.begin.length)}\n\n${markdown}\n\n${text.slice(end)}`;
}
// Prettier pads the tables as the rest of docs/ is formatted; what it decides is the page's.
const formatted = execFileSync(join(root, 'node_modules', '.bin', 'prettier'), ['--stdin-filepath', page], { input: text }).toString();
const current = readFileSync(page, 'utf8');
if (process.argv.includes('--check')) {
  if (current !== formatted) {
    console.error('docs/security.md is not current: run `npm run security:sync`');
    process.exit(1);
  }
} else if (current !== formatted) {
  writeFileSync(page, formatted);
  console.log('wrote docs/security.md');
}
