/**
 * The durable store on Azure Blob storage (Azurite locally), in the container `<hub>-devhost` of the
 * app's storage account: a log of checkpoints (an append blob of JSON lines, group-committed by
 * LogWriter) on top of a snapshot. Generation N is `snapshot-N` (absent for the first) plus `log-N`;
 * when a log grows past a limit the current state is written as `snapshot-N+1` and a new log starts.
 * Loading replays snapshot and log into a materialized copy (a MemoryStore), which is also what the
 * next snapshot is taken from. Every record is a whole checkpoint, so a checkpoint is atomic.
 */
import { type AppendBlobClient, BlobServiceClient, type ContainerClient } from '@azure/storage-blob';

import { LogWriter } from './logWriter';
import { MemoryStore } from './memoryStore';
import type { HistoryEvent } from './protocol';
import type { EntityRecord, OrchestrationRecord, PendingEntityMessage, PendingOrchestrationEvent } from './records';
import type { DurableStore, EntityCheckpoint, LoadedState, OrchestrationCheckpoint } from './store';

type LogRecord =
  | {
      readonly k: 'o';
      readonly rec: OrchestrationRecord;
      readonly add: readonly HistoryEvent[];
      readonly new: boolean;
      readonly consumed: readonly string[];
    }
  | { readonly k: 'e'; readonly rec: EntityRecord; readonly consumed: readonly string[] }
  | { readonly k: 'po'; readonly id: string; readonly p: PendingOrchestrationEvent }
  | { readonly k: 'pe'; readonly id: string; readonly p: PendingEntityMessage }
  | { readonly k: 'do'; readonly id: string };

export interface BlobStoreOptions {
  /** Start a new generation once the log holds this many bytes (default 64 MiB). */
  readonly compactBytes?: number;
}

export function containerForHub(hub: string): string {
  return `${hub.toLowerCase().replace(/[^a-z0-9]/g, '')}-devhost`;
}

const logName = (g: number): string => `log-${String(g).padStart(6, '0')}`;
const snapshotName = (g: number): string => `snapshot-${String(g).padStart(6, '0')}`;

/** Applies a record read back from a snapshot or log (loading only; live writes use the texts they wrote). */
function apply(state: MemoryStore, record: LogRecord): void {
  switch (record.k) {
    case 'o':
      state.putOrchestration(
        record.rec.instanceId,
        JSON.stringify(record.rec),
        record.add.map((e) => JSON.stringify(e)),
        record.new,
        record.consumed,
      );
      return;
    case 'e':
      state.putEntity(record.rec.id, JSON.stringify(record.rec), record.consumed);
      return;
    case 'po':
      state.putPending('o', record.id, record.p.key, JSON.stringify(record.p.event));
      return;
    case 'pe':
      state.putPending('e', record.id, record.p.key, JSON.stringify(record.p.message));
      return;
    case 'do':
      void state.deleteOrchestration(record.id);
      return;
  }
}

/** Replays JSON lines; a line that does not parse can only be the torn tail of a crashed write. */
function replayLines(state: MemoryStore, text: string): void {
  for (const line of text.split('\n')) {
    if (line === '') continue;
    let record: LogRecord;
    try {
      record = JSON.parse(line) as LogRecord;
    } catch {
      continue;
    }
    apply(state, record);
  }
}

export class BlobStore implements DurableStore {
  readonly kind = 'blob';
  private readonly container: ContainerClient;
  private state = new MemoryStore();
  private generation = 1;
  private writer: LogWriter | undefined;
  private compacting: Promise<void> | undefined;
  private readonly compactBytes: number;

  constructor(
    connectionString: string,
    readonly containerName: string,
    options: BlobStoreOptions = {},
  ) {
    this.container = BlobServiceClient.fromConnectionString(connectionString).getContainerClient(containerName);
    this.compactBytes = options.compactBytes ?? 64 * 1024 * 1024;
  }

  async load(): Promise<LoadedState> {
    await this.container.createIfNotExists();
    const names: string[] = [];
    for await (const blob of this.container.listBlobsFlat()) names.push(blob.name);
    const snapshots = names.filter((n) => n.startsWith('snapshot-')).map((n) => Number(n.slice('snapshot-'.length)));
    this.generation = Math.max(1, ...snapshots);
    this.state = new MemoryStore();
    if (snapshots.includes(this.generation)) {
      replayLines(this.state, (await this.container.getBlobClient(snapshotName(this.generation)).downloadToBuffer()).toString('utf8'));
    }
    const log = this.container.getAppendBlobClient(logName(this.generation));
    await log.createIfNotExists();
    const bytes = await log.downloadToBuffer();
    replayLines(this.state, bytes.toString('utf8'));
    const torn = bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a;
    this.writer = new LogWriter(log, bytes.length, torn, () => this.maybeCompact());
    this.dropOlder(names);
    if (bytes.length > this.compactBytes / 4) await this.compact();
    return this.state.load();
  }

  private dropOlder(names: readonly string[]): void {
    for (const name of names) {
      const g = Number(name.replace(/^(log|snapshot)-/, ''));
      if (Number.isFinite(g) && g < this.generation) void this.container.deleteBlob(name).catch(() => undefined);
    }
  }

  private append(line: string, onDurable: () => void): Promise<void> {
    if (this.writer === undefined) return Promise.reject(new Error('The durable store was not loaded'));
    return this.writer.append(line, onDurable);
  }

  // Each record is serialized once: the same texts go into the log line and the materialized copy.

  saveOrchestration(c: OrchestrationCheckpoint): Promise<void> {
    const rec = c.record;
    const summary = JSON.stringify({ ...rec, history: [] });
    const line = `{"k":"o","rec":${summary},"add":[${c.appended.join(',')}],"new":${c.newExecution},"consumed":${JSON.stringify(c.consumed)}}`;
    return this.append(line, () => this.state.putOrchestration(rec.instanceId, summary, c.appended, c.newExecution, c.consumed));
  }

  saveEntity(c: EntityCheckpoint): Promise<void> {
    const json = JSON.stringify(c.record);
    return this.append(`{"k":"e","rec":${json},"consumed":${JSON.stringify(c.consumed)}}`, () =>
      this.state.putEntity(c.record.id, json, c.consumed),
    );
  }

  enqueueOrchestrationEvent(instanceId: string, pending: PendingOrchestrationEvent): Promise<void> {
    const json = JSON.stringify(pending.event);
    const line = `{"k":"po","id":${JSON.stringify(instanceId)},"p":{"key":${JSON.stringify(pending.key)},"event":${json}}}`;
    return this.append(line, () => this.state.putPending('o', instanceId, pending.key, json));
  }

  enqueueEntityMessage(entityId: string, pending: PendingEntityMessage): Promise<void> {
    const json = JSON.stringify(pending.message);
    const line = `{"k":"pe","id":${JSON.stringify(entityId)},"p":{"key":${JSON.stringify(pending.key)},"message":${json}}}`;
    return this.append(line, () => this.state.putPending('e', entityId, pending.key, json));
  }

  deleteOrchestration(instanceId: string): Promise<void> {
    return this.append(
      JSON.stringify({ k: 'do', id: instanceId } satisfies LogRecord),
      () => void this.state.deleteOrchestration(instanceId),
    );
  }

  private maybeCompact(): void {
    if (this.writer !== undefined && this.writer.position > this.compactBytes && this.compacting === undefined) {
      this.compacting = this.compact()
        .catch(() => undefined)
        .finally(() => {
          this.compacting = undefined;
        });
    }
  }

  /** Writes the state as the next generation's snapshot and moves writing to its log. */
  private async compact(): Promise<void> {
    const writer = this.writer;
    if (writer === undefined) return;
    await writer.pause();
    const next = this.generation + 1;
    let log: AppendBlobClient | undefined;
    try {
      const state = await this.state.load();
      const lines: string[] = [];
      for (const { record, pending } of state.orchestrations) {
        lines.push(
          JSON.stringify({ k: 'o', rec: { ...record, history: [] }, add: record.history, new: true, consumed: [] } satisfies LogRecord),
        );
        for (const p of pending) lines.push(JSON.stringify({ k: 'po', id: record.instanceId, p } satisfies LogRecord));
      }
      for (const { record, pending } of state.entities) {
        lines.push(JSON.stringify({ k: 'e', rec: record, consumed: [] } satisfies LogRecord));
        for (const p of pending) lines.push(JSON.stringify({ k: 'pe', id: record.id, p } satisfies LogRecord));
      }
      const body = Buffer.from(lines.map((l) => `${l}\n`).join(''), 'utf8');
      await this.container.getBlockBlobClient(snapshotName(next)).uploadData(body);
      log = this.container.getAppendBlobClient(logName(next));
      await log.createIfNotExists();
      if ((await log.getProperties()).contentLength !== 0) throw new Error(`${logName(next)} already has content`);
    } catch (err) {
      writer.resume(this.container.getAppendBlobClient(logName(this.generation)), writer.position);
      throw err;
    }
    const previous = this.generation;
    this.generation = next;
    writer.resume(log, 0);
    void this.container.deleteBlob(logName(previous)).catch(() => undefined);
    void this.container.deleteBlob(snapshotName(previous)).catch(() => undefined);
  }

  close(): Promise<void> {
    return this.compacting ?? Promise.resolve();
  }
}
