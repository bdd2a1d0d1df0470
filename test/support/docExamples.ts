/**
 * The examples of README.md and docs/*.md, read the way docs/local-development.md ("Examples are
 * tests") tells writers to write them, so that the e2e runner can execute them against a devhost
 * and a documented example cannot drift from the code.
 *
 * - A fenced `sh` block holding a `curl` command is an example. Its commands run in page order.
 * - A comment right after a command (on its line, or on the lines below with no blank line between)
 *   may state what comes back: an HTTP status, a body shape, or both (`# 202 {"name":"views",…}`).
 *   Without a status, any 2xx will do. Any other comment is prose.
 * - A body shape is JSON in which `…` stands for "more members/elements" inside an object or array,
 *   or for any value; `"…"` is any value too. Strings, numbers, booleans and null are compared
 *   exactly, except where a placeholder stands for what varies from run to run (see `placeholders`):
 *   `"<id>"`, `"<time>"`, `"<etag>"`, `"<text>"`, alone or inside a string (`"/api/jobs/<id>"`).
 * - `<!-- example: azure-only -->` (or `<!-- example: azure-only: why -->`) right before a block
 *   skips it by name; `<!-- example-settings: NAME=value … -->` anywhere sets the page's host settings.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The base URL the docs use; the runner replaces it with the host's. */
export const documentedBaseUrl = 'http://localhost:7071';

export type Shape =
  | { readonly kind: 'any' }
  | { readonly kind: 'literal'; readonly value: string | number | boolean | null }
  | { readonly kind: 'pattern'; readonly text: string; readonly pattern: RegExp }
  | { readonly kind: 'object'; readonly members: ReadonlyMap<string, Shape>; readonly open: boolean }
  | { readonly kind: 'array'; readonly items: readonly Shape[]; readonly open: boolean };

interface Expectation {
  /** The documented status; undefined means "any 2xx". */
  readonly status?: number;
  readonly body?: Shape;
  /** The shape as documented, for messages. */
  readonly text?: string;
}

export interface ExampleStep {
  readonly page: string;
  /** 1-based line of the command in the page. */
  readonly line: number;
  readonly command: string;
  readonly expect: Expectation;
  /** Set when the block is marked `<!-- example: azure-only … -->`. */
  readonly skip?: string;
}

export interface ExamplePage {
  readonly page: string;
  readonly settings: Readonly<Record<string, string>>;
  readonly steps: readonly ExampleStep[];
}

const markerPattern = /^<!--\s*example:\s*(.+?)\s*-->$/;
const settingsPattern = /^<!--\s*example-settings:\s*(.+?)\s*-->$/;

/** The pages that hold examples: README.md and every docs/*.md, README first, then by name. */
export function documentationPages(repoRoot: string): string[] {
  const docs = readdirSync(join(repoRoot, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`);
  return ['README.md', ...docs];
}

export function readExamplePage(repoRoot: string, page: string): ExamplePage {
  return parseExamplePage(page, readFileSync(join(repoRoot, page), 'utf8'));
}

export function parseExamplePage(page: string, markdown: string): ExamplePage {
  const lines = markdown.split('\n');
  const settings: Record<string, string> = {};
  const steps: ExampleStep[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] ?? '';
    const settingsMatch = settingsPattern.exec(line.trim());
    if (settingsMatch !== null) {
      for (const pair of (settingsMatch[1] ?? '').split(/\s+/)) {
        const eq = pair.indexOf('=');
        if (eq <= 0) throw new Error(`${page}:${i + 1}: example-settings wants NAME=value pairs, got "${pair}"`);
        settings[pair.slice(0, eq)] = pair.slice(eq + 1);
      }
    }
    const fence = /^```(\S*)/.exec(line);
    if (fence === null) {
      i++;
      continue;
    }
    const start = i + 1;
    let end = start;
    while (end < lines.length && !(lines[end] ?? '').startsWith('```')) end++;
    const body = lines.slice(start, end);
    const language = fence[1] ?? '';
    const hasCurl = body.some((l) => /(^|[\s;|&(])curl\s/.test(l) && !l.trimStart().startsWith('#'));
    if (hasCurl && language !== 'sh')
      throw new Error(`${page}:${i + 1}: a curl example belongs in a \`\`\`sh block (it is ${language || 'untagged'})`);
    if (language === 'sh' && hasCurl) {
      const skip = markerBefore(page, lines, i);
      for (const step of parseBlock(page, body, start + 1)) steps.push(skip === undefined ? step : { ...step, skip });
    }
    i = end + 1;
  }
  return { page, settings, steps };
}

/** The `<!-- example: … -->` marker on the nearest non-blank line above a fence. */
function markerBefore(page: string, lines: readonly string[], fenceIndex: number): string | undefined {
  let j = fenceIndex - 1;
  while (j >= 0 && (lines[j] ?? '').trim() === '') j--;
  const match = markerPattern.exec((lines[j] ?? '').trim());
  if (match === null) return undefined;
  const marker = match[1] ?? '';
  if (!/^azure-only\b/.test(marker)) throw new Error(`${page}:${j + 1}: unknown example marker "${marker}" (known: azure-only)`);
  return marker;
}

/** Splits a block into commands (joining `\` continuations and quoted newlines) with their expectations. */
function parseBlock(page: string, body: readonly string[], firstLine: number): ExampleStep[] {
  const steps: ExampleStep[] = [];
  let k = 0;
  while (k < body.length) {
    const raw = body[k] ?? '';
    if (raw.trim() === '' || raw.trimStart().startsWith('#')) {
      k++;
      continue;
    }
    const line = firstLine + k;
    let command = '';
    let trailing: string | undefined;
    for (;;) {
      const text = body[k] ?? '';
      const split = splitComment(command + text);
      k++;
      if (split.openQuote || (split.comment === undefined && split.code.endsWith('\\'))) {
        command = split.code + '\n';
        if (k >= body.length) throw new Error(`${page}:${line}: the command does not end before its block does`);
        continue;
      }
      command = split.code.trimEnd();
      trailing = split.comment;
      break;
    }
    // The comment lines right below a command continue its trailing comment when that holds no expectation yet.
    const below: string[] = [];
    while (k < body.length && (body[k] ?? '').trimStart().startsWith('#')) {
      below.push((body[k] ?? '').trimStart().replace(/^#\s?/, ''));
      k++;
    }
    const expectation = parseExpectation(page, line, trailing, below);
    steps.push({ page, line, command, expect: expectation });
  }
  return steps;
}

/** Cuts a shell line at its first unquoted `#` that starts a word; reports an unclosed quote. */
function splitComment(text: string): { code: string; comment?: string; openQuote: boolean } {
  let quote: '"' | "'" | undefined;
  for (let c = 0; c < text.length; c++) {
    const ch = text[c];
    if (quote !== undefined) {
      if (ch === quote) quote = undefined;
      else if (ch === '\\' && quote === '"') c++;
      continue;
    }
    if (ch === "'" || ch === '"') quote = ch;
    else if (ch === '\\') c++;
    else if (ch === '#' && (c === 0 || /\s/.test(text[c - 1] ?? ''))) {
      return { code: text.slice(0, c), comment: text.slice(c + 1).trim(), openQuote: false };
    }
  }
  return { code: text, openQuote: quote !== undefined };
}

const expectationStart = /^(?:(\d{3})(?![\d])\s*)?([{[].*)?/s;

function parseExpectation(page: string, line: number, trailing: string | undefined, below: readonly string[]): Expectation {
  const first = trailing !== undefined && startsExpectation(trailing) ? trailing : below[0];
  if (first === undefined || !startsExpectation(first)) return {};
  const rest = first === trailing ? below : below.slice(1);
  const match = expectationStart.exec(first);
  const status = match?.[1] === undefined ? undefined : Number(match[1]);
  const json = match?.[2];
  if (json === undefined) return status === undefined ? {} : { status };
  // A shape may go on over the comment lines below it.
  let text = json;
  let parsed = tryShape(text);
  for (const more of rest) {
    if (parsed !== undefined) break;
    text += `\n${more}`;
    parsed = tryShape(text);
  }
  if (parsed === undefined) throw new Error(`${page}:${line}: the documented body shape does not parse: ${text}`);
  return { ...(status === undefined ? {} : { status }), body: parsed.shape, text: text.slice(0, parsed.end) };
}

function startsExpectation(comment: string): boolean {
  return /^\d{3}(?!\d)/.test(comment) || /^[{[]/.test(comment);
}

function tryShape(text: string): { shape: Shape; end: number } | undefined {
  try {
    return parseShape(text);
  } catch {
    return undefined;
  }
}

/**
 * What a placeholder in a documented string stands for. Only these: a documented string that holds
 * anything else in angle brackets is compared as written. Times are RFC 3339 as the API writes them.
 */
const placeholders: Readonly<Record<string, { readonly means: string; readonly pattern: string }>> = {
  id: { means: 'an id the service made up (a job, run, message or instance id)', pattern: '[A-Za-z0-9][A-Za-z0-9._:~-]*' },
  time: { means: 'a time, as the API writes it', pattern: '\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(?:\\.\\d+)?(?:Z|[+-]\\d{2}:\\d{2})' },
  etag: { means: 'an entity tag or other opaque version token', pattern: '(?:W/)?"?[^"\\s]+"?' },
  text: { means: 'any text (a message or value that depends on the moment)', pattern: '[\\s\\S]*' },
};

const placeholderPattern = new RegExp(`<(${Object.keys(placeholders).join('|')})>`, 'g');

/** A documented string: itself, or a pattern when it holds placeholders. */
function stringShape(value: string): Shape {
  if (value === '…' || value === '...') return { kind: 'any' };
  const parts = value.split(placeholderPattern);
  if (parts.length === 1) return { kind: 'literal', value };
  const source = parts
    .map((part, i) => (i % 2 === 1 ? `(?:${placeholders[part]?.pattern ?? ''})` : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return { kind: 'pattern', text: value, pattern: new RegExp(`^${source}$`) };
}

/** Parses JSON-with-`…` from the start of `text`; what follows the value is prose. */
export function parseShape(text: string): { shape: Shape; end: number } {
  let p = 0;
  const ws = (): void => {
    while (p < text.length && /\s/.test(text[p] ?? '')) p++;
  };
  const ellipsis = (): boolean => {
    if (text.startsWith('…', p)) {
      p += 1;
      return true;
    }
    if (text.startsWith('...', p)) {
      p += 3;
      return true;
    }
    return false;
  };
  const fail = (what: string): never => {
    throw new Error(`${what} at ${p}`);
  };
  const stringLiteral = (): string => {
    const start = p;
    p++;
    while (p < text.length && text[p] !== '"') p += text[p] === '\\' ? 2 : 1;
    if (p >= text.length) fail('unterminated string');
    p++;
    return JSON.parse(text.slice(start, p)) as string;
  };
  /** Reads entries up to `close` (commas skipped); true when a `…` among them leaves the shape open. */
  const entries = (close: string, entry: () => void): boolean => {
    let open = false;
    for (;;) {
      ws();
      if (text[p] === ',') p++;
      else if (text[p] === close) {
        p++;
        return open;
      } else if (ellipsis()) open = true;
      else entry();
    }
  };
  const value = (): Shape => {
    ws();
    if (ellipsis()) return { kind: 'any' };
    const ch = text[p];
    if (ch === '{') {
      p++;
      const members = new Map<string, Shape>();
      const open = entries('}', () => {
        if (text[p] !== '"') fail('expected a member name');
        const name = stringLiteral();
        ws();
        if (text[p] !== ':') fail('expected ":"');
        p++;
        members.set(name, value());
      });
      return { kind: 'object', members, open };
    }
    if (ch === '[') {
      p++;
      const items: Shape[] = [];
      const open = entries(']', () => items.push(value()));
      return { kind: 'array', items, open };
    }
    if (ch === '"') return stringShape(stringLiteral());
    for (const [word, literal] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (text.startsWith(word, p)) {
        p += word.length;
        return { kind: 'literal', value: literal };
      }
    }
    const number = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(p));
    if (number !== null) {
      p += number[0].length;
      return { kind: 'literal', value: Number(number[0]) };
    }
    return fail('expected a value');
  };
  ws();
  if (text[p] !== '{' && text[p] !== '[') fail('a body shape is an object or an array');
  const shape = value();
  return { shape, end: p };
}

/** Where `actual` departs from `shape` ("$.gate.state: expected string, got null"), or [] when it fits. */
export function shapeMismatches(shape: Shape, actual: unknown, path = '$'): string[] {
  const kindOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
  switch (shape.kind) {
    case 'any':
      return [];
    case 'literal':
      return actual === shape.value ? [] : [`${path}: expected ${JSON.stringify(shape.value)}, got ${JSON.stringify(actual)}`];
    case 'pattern':
      return typeof actual === 'string' && shape.pattern.test(actual)
        ? []
        : [`${path}: expected ${JSON.stringify(shape.text)}, got ${JSON.stringify(actual)}`];
    case 'array': {
      if (!Array.isArray(actual)) return [`${path}: expected an array, got ${kindOf(actual)}`];
      const list = actual as unknown[];
      const count = shape.open ? list.length >= shape.items.length : list.length === shape.items.length;
      const problems = count
        ? []
        : [`${path}: expected ${shape.open ? 'at least ' : ''}${shape.items.length} elements, got ${list.length}`];
      shape.items.forEach((item, n) => {
        if (n < list.length) problems.push(...shapeMismatches(item, list[n], `${path}[${n}]`));
      });
      return problems;
    }
    case 'object': {
      if (kindOf(actual) !== 'object') return [`${path}: expected an object, got ${kindOf(actual)}`];
      const record = actual as Record<string, unknown>;
      const problems: string[] = [];
      for (const [name, member] of shape.members) {
        if (!(name in record)) problems.push(`${path}.${name}: missing`);
        else problems.push(...shapeMismatches(member, record[name], `${path}.${name}`));
      }
      if (!shape.open) {
        const extra = Object.keys(record).filter((name) => !shape.members.has(name));
        if (extra.length > 0) problems.push(`${path}: undocumented members ${extra.join(', ')} (add them, or "…")`);
      }
      return problems;
    }
  }
}
