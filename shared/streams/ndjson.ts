/**
 * The log format: one JSON object per line (NDJSON), UTF-8. Pure functions, used by the writer entity
 * (building lines, taking a prefix of the buffer) and by the append activity (cutting blocks), so
 * both must agree byte for byte and decide the same way every time.
 */

/** One line of the log. */
export interface LogLine {
  readonly type: string;
  readonly producer: string;
  readonly seq: number;
  /** Position in the writer's log: 0, 1, 2, … without gaps. */
  readonly index: number;
  /** When the writer accepted it (the producer-side clock of the request), ISO 8601. */
  readonly at: string;
  readonly data: unknown;
}

export function formatLine(line: LogLine): string {
  // Fixed member order: the same event always serialises to the same bytes.
  return `${JSON.stringify({ type: line.type, producer: line.producer, seq: line.seq, index: line.index, at: line.at, data: line.data ?? null })}\n`;
}

/** Splits `text` after its `count`-th line. */
export function takeLines(text: string, count: number): { readonly head: string; readonly rest: string } {
  let end = 0;
  for (let i = 0; i < count; i++) {
    const nl = text.indexOf('\n', end);
    if (nl < 0) return { head: text, rest: '' };
    end = nl + 1;
  }
  return { head: text.slice(0, end), rest: text.slice(end) };
}

/** The `at` of the first line, in ms; null for empty text. */
export function firstLineAt(text: string): number | null {
  const nl = text.indexOf('\n');
  if (nl < 0) return null;
  const { at } = JSON.parse(text.slice(0, nl)) as { at?: unknown };
  return typeof at === 'string' ? Date.parse(at) : null;
}

const encoder = new TextEncoder();

export function utf8Length(text: string): number {
  return encoder.encode(text).length;
}

/**
 * Cuts NDJSON text into blocks of at most `maxBytes`, only at line ends. A single line longer than
 * `maxBytes` gets a block of its own (the settings keep events well below a block).
 */
export function splitBlocks(text: string, maxBytes: number): Uint8Array[] {
  const blocks: Uint8Array[] = [];
  let current: Uint8Array[] = [];
  let size = 0;
  const flush = (): void => {
    if (current.length === 0) return;
    const block = new Uint8Array(size);
    let at = 0;
    for (const part of current) {
      block.set(part, at);
      at += part.length;
    }
    blocks.push(block);
    current = [];
    size = 0;
  };
  let start = 0;
  while (start < text.length) {
    const nl = text.indexOf('\n', start);
    const end = nl < 0 ? text.length : nl + 1;
    const line = encoder.encode(text.slice(start, end));
    if (size + line.length > maxBytes) flush();
    current.push(line);
    size += line.length;
    start = end;
  }
  flush();
  return blocks;
}
