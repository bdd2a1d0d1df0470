/** Helpers for the streams e2e tests: producers over HTTP, and reading the logs straight from storage. */
import { BlobServiceClient } from '@azure/storage-blob';

import type { LogLine } from '../../../shared/streams/ndjson';
import { type E2eHost, storageOf } from './harness';
import { type JsonResponse, requestJson } from './http';
import { until } from './wait';

export interface AppendAnswer {
  readonly partition: string;
  readonly resource: string;
  readonly accepted: number;
  readonly duplicates: number;
  readonly lastIndex: number;
  readonly flushed: boolean;
}

export interface StreamView {
  readonly route: { partition: string; resource: string; version: number; source: string };
  readonly writer: {
    key: string;
    exists: boolean;
    owns: string;
    accepted: number;
    flushedThrough: number;
    bufferDepth: number;
    /** When the oldest event not yet in the log was accepted (ISO), or null with nothing buffered. */
    oldestUnflushedAt: string | null;
    /** How long that event has waited (ms); 0 with nothing buffered. */
    flushLagMs: number;
    lastFlush: { blocksFoundWritten: number } | null;
    lastError: { message: string } | null;
    totals: { accepted: number; refusedFull: number; flushes: number };
  };
}

export function post(host: E2eHost, type: string, body: unknown, query = ''): Promise<JsonResponse<AppendAnswer>> {
  return requestJson<AppendAnswer>(host, 'POST', `/api/streams/${type}/events${query}`, { body });
}

export async function view(host: E2eHost, type: string): Promise<StreamView> {
  const res = await requestJson<StreamView>(host, 'GET', `/api/streams/${type}`);
  if (res.status !== 200) throw new Error(`GET stream ${type}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/**
 * An `ack=flushed` append as docs/streams.md tells a client to make it: the same events again while
 * the app answers 503 with `"buffered": true` (accepted, not flushed within the ack timeout, which a
 * busy machine makes likely), until it answers something else: 200 once they are in the log. The
 * writer takes a repeat as a duplicate.
 */
export function postFlushed(host: E2eHost, type: string, body: unknown, moreQuery = ''): Promise<JsonResponse<AppendAnswer>> {
  const notFlushedYet = (answer: JsonResponse<AppendAnswer>): boolean =>
    answer.status === 503 && (answer.body as { buffered?: unknown }).buffered === true;
  return untilDone(`the flush of ${type}'s events`, () => post(host, type, body, `?ack=flushed${moreQuery}`), notFlushedYet);
}

/**
 * A flush as a client asks for it: again while the app answers 202 (requested, not finished yet, which
 * a busy machine makes likely), until it answers something else — 200 once the events are in the log.
 */
export async function flush(host: E2eHost, type: string): Promise<JsonResponse<{ flushed: boolean; flushedThrough: number }>> {
  return untilDone(`the flush of ${type}`, () =>
    requestJson<{ flushed: boolean; flushedThrough: number }>(host, 'POST', `/api/streams/${type}/flush`, { key: 'admin' }),
  );
}

export interface RemapAnswer {
  readonly type: string;
  readonly changed: boolean;
  readonly switched: boolean;
  readonly from: { partition: string; resource: string; version: number };
  readonly to: { partition: string; resource: string; version: number };
}

/**
 * A remap as the API tells a client to make it: the PUT, then the same PUT again while the app
 * answers 202 (route written, handoff still under way), which re-drives the handoff. `first` is the
 * answer that changed the route; `done` the one that ended the wait (200 once the new writer owns the
 * type; a repeat changes nothing, so it says `changed: false`).
 */
export async function remap(
  host: E2eHost,
  type: string,
  target: { partition?: string; resource?: string },
): Promise<{ first: JsonResponse<RemapAnswer>; done: JsonResponse<RemapAnswer> }> {
  const put = () => requestJson<RemapAnswer>(host, 'PUT', `/api/streams/${type}/route`, { body: target, key: 'admin' });
  const first = await put();
  const done = first.status === 202 ? await untilDone(`the remap of ${type}`, put) : first;
  return { first, done };
}

/**
 * Asks until the answer is not one of "under way" (by default a 202), the first time at once, then
 * every second; returns that answer.
 */
function untilDone<T>(
  what: string,
  ask: () => Promise<JsonResponse<T>>,
  underWay: (answer: JsonResponse<T>) => boolean = (answer) => answer.status === 202,
): Promise<JsonResponse<T>> {
  return until(
    what,
    async () => {
      const answer = await ask();
      return underWay(answer) ? undefined : answer;
    },
    undefined,
    1000,
  );
}

function container(host: E2eHost) {
  return BlobServiceClient.fromConnectionString(storageOf(host)).getContainerClient('streams');
}

/** Every blob of one writer's log, in order. */
export async function logBlobs(host: E2eHost, partition: string, resource: string): Promise<string[]> {
  const names: string[] = [];
  const client = container(host);
  if (!(await client.exists())) return names;
  for await (const blob of client.listBlobsFlat({ prefix: `${partition}/${resource}/` })) names.push(blob.name);
  return names.sort();
}

/** The lines of one writer's log (all its blobs, in order). */
export async function readLog(host: E2eHost, partition: string, resource: string): Promise<LogLine[]> {
  const lines: LogLine[] = [];
  for (const name of await logBlobs(host, partition, resource)) {
    const text = (await container(host).getBlobClient(name).downloadToBuffer()).toString('utf8');
    if (text !== '' && !text.endsWith('\n')) throw new Error(`${name} ends with a partial line`);
    for (const line of text.split('\n')) if (line !== '') lines.push(JSON.parse(line) as LogLine);
  }
  return lines;
}

/** Groups a log's lines by producer, keeping log order. */
export function seqsByProducer(lines: readonly LogLine[]): Map<string, number[]> {
  const by = new Map<string, number[]>();
  for (const line of lines) {
    const list = by.get(line.producer) ?? [];
    list.push(line.seq);
    by.set(line.producer, list);
  }
  return by;
}

export { until } from './wait';
