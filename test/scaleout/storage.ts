/**
 * The checkers' own look at storage, where the final state lives (tables, blobs, queues), with the
 * SDKs directly: nothing here goes through the app, so an app bug cannot hide in its own reads.
 */
import { TableClient } from '@azure/data-tables';
import { BlobServiceClient } from '@azure/storage-blob';
import { QueueClient } from '@azure/storage-queue';

export type Row = Record<string, unknown> & { partitionKey: string; rowKey: string };

const options = { allowInsecureConnection: true };

export async function tableRows(connection: string, table: string, filter?: string): Promise<Row[]> {
  const client = TableClient.fromConnectionString(connection, table, options);
  const rows: Row[] = [];
  try {
    for await (const row of client.listEntities<Record<string, unknown>>(filter === undefined ? {} : { queryOptions: { filter } }))
      rows.push(row as Row);
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return [];
    throw err;
  }
  return rows;
}

/** A table number as stored: Int64 comes back as a bigint or as `{ value, type: 'Int64' }`. */
export function int(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'string') return Number(value);
  if (typeof value === 'object' && value !== null && 'value' in value) return Number(value.value);
  return NaN;
}

export async function blobTexts(connection: string, container: string, prefix: string): Promise<{ name: string; text: string }[]> {
  const client = BlobServiceClient.fromConnectionString(connection).getContainerClient(container);
  const out: { name: string; text: string }[] = [];
  try {
    for await (const blob of client.listBlobsFlat({ prefix })) {
      const body = await client.getBlobClient(blob.name).downloadToBuffer();
      out.push({ name: blob.name, text: body.toString('utf8') });
    }
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return [];
    throw err;
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

export interface QueuedMessage {
  readonly text: string;
  readonly insertedOn: number;
  readonly dequeueCount: number;
}

/** Every message of a queue, taken off it (the checker runs once nothing else reads the queue). Bodies are base64-decoded. */
export async function drainQueue(connection: string, queue: string): Promise<QueuedMessage[]> {
  const client = new QueueClient(connection, queue);
  if (!(await client.exists())) return [];
  const out: QueuedMessage[] = [];
  for (;;) {
    const { receivedMessageItems } = await client.receiveMessages({ numberOfMessages: 32, visibilityTimeout: 300 });
    if (receivedMessageItems.length === 0) return out;
    for (const m of receivedMessageItems) {
      out.push({
        text: Buffer.from(m.messageText, 'base64').toString('utf8'),
        insertedOn: m.insertedOn.getTime(),
        dequeueCount: m.dequeueCount,
      });
      await client.deleteMessage(m.messageId, m.popReceipt);
    }
  }
}
