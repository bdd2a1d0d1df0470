/**
 * Group commit onto an append blob: records submitted while a block is being written go out
 * together in the next block (up to ~4 MB), so a thousand checkpoints cost a handful of requests.
 * Each block is appended at the position this writer expects (`appendPosition`), which also stops
 * a second process writing the same task hub. A record counts as durable, and its callback runs,
 * once every block carrying it has been appended.
 */
import type { AppendBlobClient } from '@azure/storage-blob';

/** Azure allows 4 MiB per appended block; stay under it. */
const maxBlockBytes = 4_000_000;

interface Entry {
  readonly text: string;
  readonly bytes: number;
  readonly onDurable: () => void;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

export class LogWriter {
  private queue: Entry[] = [];
  private writing = false;
  private paused = false;
  private readonly drainWaiters: (() => void)[] = [];

  /**
   * @param torn the blob ends inside a record (a crash cut a multi-block write short): the next
   * block starts with a newline so the fragment stays a line of its own, which loading skips.
   */
  constructor(
    private blob: AppendBlobClient,
    public position: number,
    private torn = false,
    private readonly afterWrite: () => void = () => undefined,
  ) {}

  /** Appends one line (no newline inside) and resolves once it is durable. */
  append(line: string, onDurable: () => void): Promise<void> {
    const text = `${line}\n`;
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ text, bytes: Buffer.byteLength(text, 'utf8'), onDurable, resolve, reject });
      void this.pump();
    });
  }

  /** Stops writing after the block under way; resolves once nothing is in flight. */
  pause(): Promise<void> {
    this.paused = true;
    if (!this.writing) return Promise.resolve();
    return new Promise<void>((resolve) => this.drainWaiters.push(resolve));
  }

  /** Continues on another blob (after compaction) with whatever was queued meanwhile. */
  resume(blob: AppendBlobClient, position: number): void {
    this.blob = blob;
    this.position = position;
    this.paused = false;
    void this.pump();
  }

  private async pump(): Promise<void> {
    if (this.writing || this.paused) return;
    this.writing = true;
    try {
      while (this.queue.length > 0 && !this.paused) {
        const batch: Entry[] = [];
        let bytes = 0;
        while (this.queue.length > 0) {
          const next = this.queue[0] as Entry;
          if (batch.length > 0 && bytes + next.bytes > maxBlockBytes) break;
          batch.push(next);
          this.queue.shift();
          bytes += next.bytes;
        }
        try {
          await this.write(Buffer.from(batch.map((e) => e.text).join(''), 'utf8'));
          for (const e of batch) e.onDurable();
          for (const e of batch) e.resolve();
        } catch (err) {
          for (const e of batch) e.reject(err);
        }
        this.afterWrite();
      }
    } finally {
      this.writing = false;
      for (const resolve of this.drainWaiters.splice(0)) resolve();
    }
  }

  /** One or more blocks; a record larger than a block spans several (a crash can tear only the last). */
  private async write(records: Buffer): Promise<void> {
    const data = this.torn ? Buffer.concat([Buffer.from('\n'), records]) : records;
    for (let offset = 0; offset < data.length; offset += maxBlockBytes) {
      const block = data.subarray(offset, Math.min(data.length, offset + maxBlockBytes));
      try {
        await this.blob.appendBlock(block, block.length, { conditions: { appendPosition: this.position } });
        this.torn = offset + block.length < data.length;
      } catch (err) {
        const status = (err as { statusCode?: number }).statusCode;
        if (status === 412)
          throw new Error('Another process is writing this task hub (its durable log grew under us); one devhost per task hub.');
        throw err;
      }
      this.position += block.length;
    }
  }
}
