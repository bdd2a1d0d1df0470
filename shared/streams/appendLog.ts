/**
 * The log on storage: NDJSON in append blobs, `<partition>/<resource>/<seq>.ndjson`, rolling to the
 * next blob before the 50,000-block limit. Every block is appended with the append-position
 * condition (`If-Append-Position`), so a block lands at exactly the offset the writer expects or not
 * at all. A 412 on that condition after a lost response means an earlier attempt already wrote this
 * block: the blob's length (and the bytes at that offset) confirm it, and the append moves on.
 * So a retried flush never writes a batch twice.
 */
import type { ContainerClient } from '@azure/storage-blob';

import type { Clock } from '../clock';
import { AppError } from '../errors';
import { hasStatus, translateStorageError } from '../storage/errors';
import { logBlobName, logBlobPrefix, type WriterAddress } from './names';
import { splitBlocks } from './ndjson';
import type { FlushBatch, FlushOutcome, LogCursor } from './writerState';

const blobSeqPattern = /\/(\d{6,})\.ndjson$/;

/** The cursor a fresh writer starts at: a new blob after any the resource already has. */
export async function openLog(container: ContainerClient, address: WriterAddress): Promise<LogCursor> {
  let highest = -1;
  try {
    for await (const blob of container.listBlobsFlat({ prefix: logBlobPrefix(address) })) {
      const seq = blobSeqPattern.exec(blob.name)?.[1];
      if (seq !== undefined) highest = Math.max(highest, Number(seq));
    }
  } catch (err) {
    throw translateStorageError(err, `listing the log of ${address.partition}/${address.resource}`);
  }
  return { blob: highest + 1, position: 0, blocks: 0 };
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * After a 412 on the append position: true when the blob already holds exactly `block` at
 * `position` (our earlier attempt landed). Anything else means the blob is not what the writer
 * believes, which no retry can fix.
 */
async function alreadyWritten(container: ContainerClient, name: string, position: number, block: Uint8Array): Promise<boolean> {
  const blob = container.getAppendBlobClient(name);
  const length = (await blob.getProperties()).contentLength ?? 0;
  if (length < position + block.length) return false;
  const existing = await blob.downloadToBuffer(position, block.length);
  return sameBytes(existing, block);
}

export async function appendBatch(container: ContainerClient, batch: FlushBatch, clock: Clock): Promise<FlushOutcome> {
  const address: WriterAddress = { partition: batch.partition, resource: batch.resource };
  let cursor = batch.cursor;
  let bytes = 0;
  let found = 0;
  const blobs: string[] = [];
  const blocks = splitBlocks(batch.text, batch.maxBlockBytes);
  for (const block of blocks) {
    if (cursor.blocks >= batch.maxBlocksPerBlob) cursor = { blob: cursor.blob + 1, position: 0, blocks: 0 };
    const name = logBlobName(address, cursor.blob);
    const blob = container.getAppendBlobClient(name);
    try {
      if (cursor.position === 0) await blob.createIfNotExists({ blobHTTPHeaders: { blobContentType: 'application/x-ndjson' } });
      await blob.appendBlock(block, block.length, { conditions: { appendPosition: cursor.position } });
    } catch (err) {
      if (!hasStatus(err, 412)) throw translateStorageError(err, `appending to ${name}`);
      let landed: boolean;
      try {
        landed = await alreadyWritten(container, name, cursor.position, block);
      } catch (verifyErr) {
        throw translateStorageError(verifyErr, `verifying ${name} after a 412`);
      }
      if (!landed) {
        throw new AppError('CorruptState', `${name} does not hold the expected bytes at offset ${cursor.position}; another writer?`);
      }
      found++;
    }
    if (blobs[blobs.length - 1] !== name) blobs.push(name);
    cursor = { blob: cursor.blob, position: cursor.position + block.length, blocks: cursor.blocks + 1 };
    bytes += block.length;
  }
  return { batchId: batch.id, cursor, bytes, blocks: blocks.length, blocksFoundWritten: found, blobs, at: clock.now() };
}
