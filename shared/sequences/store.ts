/**
 * The stored side of a sequence: one table entity per sequence (PartitionKey = name) holding its
 * definition and `next`, the high-water mark — the first number no instance has reserved. Every
 * change is a conditional write with the entity's ETag; losing one throws `LostRace` so the caller
 * re-reads and retries. What is read back is parsed strictly: state that cannot be interpreted is a
 * `CorruptState` error naming the sequence, never a silent reset.
 */
import type { TableClient } from '@azure/data-tables';
import * as z from 'zod';

import { AppError } from '../errors';
import { zodIssues } from '../http/route';
import { LostRace } from '../retry';
import { hasStatus, translateStorageError } from '../storage/errors';
import { listPage, type Page, type PageRequest } from '../storage/list';
import { definitionFields, definitionProblems, maxSequenceValue, type SequenceDefinition } from './definition';

const rowKey = 'sequence';

export interface StoredSequence {
  readonly name: string;
  readonly definition: SequenceDefinition;
  /** The high-water mark: the next number storage will hand out in a block. */
  readonly next: number;
  /** Token of the last reservation, so a writer whose response was lost can recognise its own write. */
  readonly lastWrite: string;
  readonly etag: string;
}

/**
 * Numbers are stored as Int64 (read back as bigint); a plain number written by hand is accepted too.
 * Up to MAX_SAFE_INTEGER + 1: the high-water mark of a sequence that has issued its last number.
 */
const storedCount = z
  .union([
    z
      .bigint()
      .min(0n)
      .max(BigInt(maxSequenceValue) + 1n),
    z
      .number()
      .min(0)
      .max(maxSequenceValue + 1)
      .refine(Number.isInteger, 'Must be a whole number'),
  ])
  .transform((v) => Number(v));

const storedEntity = z.object({
  etag: z.string(),
  next: storedCount,
  start: storedCount,
  prefix: definitionFields.prefix,
  width: definitionFields.width,
  checkDigit: definitionFields.checkDigit,
  blockMin: definitionFields.blockSize,
  blockMax: definitionFields.blockSize,
  refillTargetSeconds: definitionFields.refillTargetSeconds,
  lastWrite: z.string().default(''),
});

function corrupt(name: string, detail: string, issues: { path: string; message: string }[] = []): AppError {
  return new AppError('CorruptState', `Stored state of sequence "${name}" is corrupt: ${detail}. It was left unchanged.`, {
    issues,
    extra: { sequence: name },
  });
}

export function parseStoredSequence(name: string, raw: unknown): StoredSequence {
  const parsed = storedEntity.safeParse(raw);
  if (!parsed.success) throw corrupt(name, 'fields are missing or malformed', zodIssues(parsed.error, 'stored'));
  const e = parsed.data;
  const definition: SequenceDefinition = {
    start: e.start,
    prefix: e.prefix,
    width: e.width,
    checkDigit: e.checkDigit,
    blockSize: { min: e.blockMin, max: e.blockMax },
    refillTargetSeconds: e.refillTargetSeconds,
  };
  const problems = definitionProblems(definition).map((p) => ({ path: `stored.${p.path.join('.')}`, message: p.message }));
  if (problems.length > 0) throw corrupt(name, 'its settings contradict each other', problems);
  if (e.next < e.start) throw corrupt(name, `next (${e.next}) is below start (${e.start})`);
  return { name, definition, next: e.next, lastWrite: e.lastWrite, etag: e.etag };
}

export class SequenceStore {
  constructor(readonly table: () => Promise<TableClient>) {}

  async read(name: string): Promise<StoredSequence | undefined> {
    const table = await this.table();
    let raw: unknown;
    try {
      raw = await table.getEntity(name, rowKey);
    } catch (err) {
      if (hasStatus(err, 404)) return undefined;
      throw translateStorageError(err, `reading sequence ${name}`);
    }
    return parseStoredSequence(name, raw);
  }

  /** A page of sequences in name order (for operators); unreadable ones by name. */
  async list(page: PageRequest): Promise<Page<StoredSequence>> {
    const query = { filter: `RowKey eq '${rowKey}'`, list: 'sequences', doing: 'listing sequences' };
    return listPage(await this.table(), query, page, (row) => parseStoredSequence(row.partitionKey ?? '', row));
  }

  /** Insert-if-absent. `created: false` returns what was already stored (whatever its definition). */
  async create(name: string, definition: SequenceDefinition): Promise<{ created: boolean; sequence: StoredSequence }> {
    const table = await this.table();
    try {
      const response = await table.createEntity({
        partitionKey: name,
        rowKey,
        next: BigInt(definition.start),
        start: BigInt(definition.start),
        prefix: definition.prefix,
        width: definition.width,
        checkDigit: definition.checkDigit,
        blockMin: definition.blockSize.min,
        blockMax: definition.blockSize.max,
        refillTargetSeconds: definition.refillTargetSeconds,
        lastWrite: '',
      });
      const etag = response.etag;
      if (etag === undefined) throw new AppError('Internal', `Storage returned no ETag creating sequence ${name}`);
      return { created: true, sequence: { name, definition, next: definition.start, lastWrite: '', etag } };
    } catch (err) {
      if (!hasStatus(err, 409)) throw translateStorageError(err, `creating sequence ${name}`);
    }
    const existing = await this.read(name);
    if (existing === undefined) throw new AppError('Conflict', `Sequence ${name} was deleted while being created; retry`);
    return { created: false, sequence: existing };
  }

  /**
   * Moves the high-water mark of `current` to `next`, if nobody has written since `current` was read.
   * Throws `LostRace` when somebody has (412).
   */
  async setNext(current: StoredSequence, next: number, lastWrite: string): Promise<StoredSequence> {
    const table = await this.table();
    try {
      const response = await table.updateEntity({ partitionKey: current.name, rowKey, next: BigInt(next), lastWrite }, 'Merge', {
        etag: current.etag,
      });
      const etag = response.etag;
      if (etag === undefined) throw new AppError('Internal', `Storage returned no ETag updating sequence ${current.name}`);
      return { ...current, next, lastWrite, etag };
    } catch (err) {
      if (hasStatus(err, 412)) throw new LostRace(`sequence ${current.name} changed since it was read`);
      if (hasStatus(err, 404)) throw new AppError('NotFound', `Sequence ${current.name} no longer exists`);
      throw translateStorageError(err, `updating sequence ${current.name}`);
    }
  }
}
