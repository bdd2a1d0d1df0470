/**
 * The idempotent append on Azurite, with the fault proxy in front of it: a block whose response is
 * lost is retried and found written (412 on the append position, verified by length and bytes), a
 * flush that fails half way and is retried writes nothing twice, the log rolls before the block
 * limit, and bytes that are not ours stop the writer instead of being papered over.
 */
import { randomUUID } from 'node:crypto';

import type { ContainerClient } from '@azure/storage-blob';

import { systemClock } from '../../../shared/clock';
import { isAppError } from '../../../shared/errors';
import { appendBatch, openLog } from '../../../shared/streams/appendLog';
import { logBlobName } from '../../../shared/streams/names';
import { formatLine } from '../../../shared/streams/ndjson';
import type { FlushBatch, LogCursor } from '../../../shared/streams/writerState';
import { type FaultProxy, type ProxiedRequest, startFaultProxy } from '../../support/faultProxy';
import { storageFor } from '../../support/sequences';
import { runStorage } from '../../support/storageAccounts';

const address = { partition: 'p01', resource: 'orders' };
const isAppend = (r: ProxiedRequest): boolean => r.service === 'blob' && r.method === 'PUT' && r.path.includes('comp=appendblock');

function lines(from: number, count: number): string {
  let text = '';
  for (let i = from; i < from + count; i++) {
    text += formatLine({
      type: 'orders',
      producer: 'p',
      seq: i,
      index: i,
      at: '2026-01-01T00:00:00.000Z',
      data: { i, pad: 'x'.repeat(40) },
    });
  }
  return text;
}

function batch(id: number, text: string, cursor: LogCursor, extra: Partial<FlushBatch> = {}): FlushBatch {
  return {
    id,
    ...address,
    text,
    count: text.split('\n').length - 1,
    bytes: Buffer.byteLength(text),
    firstIndex: 0,
    cursor,
    maxBlockBytes: 4 * 1024 * 1024,
    maxBlocksPerBlob: 50_000,
    attempts: 0,
    ...extra,
  };
}

async function read(container: ContainerClient, seq: number): Promise<string> {
  return (await container.getBlobClient(logBlobName(address, seq)).downloadToBuffer()).toString('utf8');
}

describe('append log on Azurite', () => {
  let proxy: FaultProxy;
  let container: ContainerClient;

  beforeAll(async () => {
    proxy = await startFaultProxy(runStorage());
  });
  afterAll(async () => {
    await proxy.close();
  });
  beforeEach(async () => {
    proxy.setRules();
    const storage = storageFor(proxy.connectionString, {}, { TALLYHO_STORAGE_MAX_TRIES: '3', TALLYHO_STORAGE_TRY_TIMEOUT_MS: '10000' });
    container = await storage.container(`streams${randomUUID().replace(/-/g, '').slice(0, 12)}`);
  });

  it('opens a fresh log after any blob already there, and appends batches one after another', async () => {
    expect(await openLog(container, address)).toEqual({ blob: 0, position: 0, blocks: 0 });
    const first = await appendBatch(container, batch(1, lines(0, 3), { blob: 0, position: 0, blocks: 0 }), systemClock);
    expect(first).toMatchObject({ batchId: 1, blocks: 1, blocksFoundWritten: 0, blobs: ['p01/orders/000000.ndjson'] });
    const second = await appendBatch(container, batch(2, lines(3, 2), first.cursor), systemClock);
    expect(second.cursor).toEqual({ blob: 0, position: first.bytes + second.bytes, blocks: 2 });
    expect(await read(container, 0)).toBe(lines(0, 5));
    expect(await openLog(container, address)).toEqual({ blob: 1, position: 0, blocks: 0 });
  });

  it('a lost response is retried and found written: the batch is in the blob once', async () => {
    let lost = 0;
    proxy.setRules((r) => (isAppend(r) && lost++ === 0 ? { kind: 'loseResponse' } : undefined));
    const outcome = await appendBatch(container, batch(1, lines(0, 4), { blob: 0, position: 0, blocks: 0 }), systemClock);
    expect(lost).toBeGreaterThanOrEqual(2); // the lost attempt and the SDK's retry that got the 412
    expect(outcome).toMatchObject({ blocks: 1, blocksFoundWritten: 1, cursor: { blob: 0, blocks: 1 } });
    expect(await read(container, 0)).toBe(lines(0, 4));
  });

  it('a flush that fails half way and is retried as a whole writes no block twice', async () => {
    const text = lines(0, 6);
    const small = { maxBlockBytes: Math.ceil(text.length / 3) + 1 };
    let appends = 0;
    // The first block lands and its response is lost; every try of the second block fails.
    proxy.setRules((r) => {
      if (!isAppend(r)) return undefined;
      appends++;
      if (appends === 1) return { kind: 'loseResponse' };
      return appends <= 6 && r.headers['x-ms-blob-condition-appendpos'] !== '0' ? { kind: 'status', status: 503 } : undefined;
    });
    const first = batch(1, text, { blob: 0, position: 0, blocks: 0 }, small);
    await expect(appendBatch(container, first, systemClock)).rejects.toMatchObject({ code: 'DependencyUnavailable' });
    const landed = await read(container, 0);
    expect(landed.length).toBeGreaterThan(0);
    expect(text.startsWith(landed)).toBe(true);

    proxy.setRules();
    const outcome = await appendBatch(container, first, systemClock);
    expect(outcome.blocksFoundWritten).toBeGreaterThanOrEqual(1);
    expect(outcome.blocks).toBe(3);
    expect(await read(container, 0)).toBe(text);
  });

  it('rolls to the next blob before the block limit', async () => {
    const text = lines(0, 5);
    const outcome = await appendBatch(
      container,
      batch(1, text, { blob: 0, position: 0, blocks: 0 }, { maxBlockBytes: Math.ceil(text.length / 5) + 1, maxBlocksPerBlob: 2 }),
      systemClock,
    );
    expect(outcome.blobs).toEqual(['p01/orders/000000.ndjson', 'p01/orders/000001.ndjson', 'p01/orders/000002.ndjson']);
    expect(outcome.cursor).toMatchObject({ blob: 2, blocks: 1 });
    const props = await container.getAppendBlobClient(logBlobName(address, 0)).getProperties();
    expect(props.blobCommittedBlockCount).toBe(2);
    expect((await read(container, 0)) + (await read(container, 1)) + (await read(container, 2))).toBe(text);
  });

  it('refuses to go on when the blob holds bytes that are not ours', async () => {
    const blob = container.getAppendBlobClient(logBlobName(address, 0));
    await blob.create();
    await blob.appendBlock('{"foreign":true}\n', 17);
    const err: unknown = await appendBatch(container, batch(1, lines(0, 1), { blob: 0, position: 0, blocks: 0 }), systemClock).catch(
      (e: unknown) => e,
    );
    expect(isAppError(err) && err.code).toBe('CorruptState');
    expect(await read(container, 0)).toBe('{"foreign":true}\n');
  });
});
