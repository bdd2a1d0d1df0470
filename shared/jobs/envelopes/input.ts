/**
 * The job's input file: one line of JSON per item, in submission order (NDJSON, UTF-8). It is
 * written once, before any envelope is sent, and is what claim checks point into (a byte range per
 * big item), what an interrupted enqueue is resumed from and what retry-failed re-sends.
 */
import { createHash } from 'node:crypto';

import { AppError } from '../../errors';
import type { ClaimCheck, EnvelopeItem, JsonObject } from './envelope';

export interface InputItem {
  readonly id: string;
  /** The item as JSON (the server's serialisation of what was submitted). */
  readonly line: string;
  /** UTF-8 bytes of `line`. */
  readonly bytes: number;
  /** Byte offset of `line` in the input file. */
  readonly offset: number;
}

export interface InputFile {
  readonly items: readonly InputItem[];
  readonly text: string;
  readonly bytes: number;
  /** SHA-256 of the file: a resubmission with the same Idempotency-Key must carry the same items. */
  readonly sha256: string;
}

export function sha256Hex(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Items are objects with a string `id` (checked by the request schema before this runs). */
export function buildInput(items: readonly { readonly id: string }[]): InputFile {
  const out: InputItem[] = [];
  let offset = 0;
  const lines: string[] = [];
  for (const item of items) {
    const line = JSON.stringify(item);
    const bytes = Buffer.byteLength(line, 'utf8');
    out.push({ id: item.id, line, bytes, offset });
    lines.push(line);
    offset += bytes + 1;
  }
  const text = lines.length === 0 ? '' : `${lines.join('\n')}\n`;
  return { items: out, text, bytes: offset, sha256: sha256Hex(text) };
}

/** Reads an input file back (resume, retry-failed); it must re-serialise to exactly itself. */
export function parseInput(text: string): InputFile {
  const values = text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { id?: unknown });
  if (values.some((v) => typeof v.id !== 'string')) throw new AppError('CorruptState', 'A line of a job input file has no id');
  const rebuilt = buildInput(values as { id: string }[]);
  if (rebuilt.text !== text) throw new AppError('CorruptState', 'A job input file does not re-serialise to itself');
  return rebuilt;
}

/** The envelope entry of an item: inline, or a claim check into `blob` when it is larger than `claimCheckBytes`. */
export function entryFor(item: InputItem, attempt: number, claimCheckBytes: number, blob: string): EnvelopeItem {
  if (item.bytes <= claimCheckBytes) return { id: item.id, attempt, data: JSON.parse(item.line) as JsonObject };
  const claimCheck: ClaimCheck = { blob, offset: item.offset, length: item.bytes, sha256: sha256Hex(item.line) };
  return { id: item.id, attempt, claimCheck };
}
