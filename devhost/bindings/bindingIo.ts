/**
 * Non-trigger bindings around an invocation: input data the host supplies (blob input, and any type
 * an extension serves, e.g. `durableClient`) and the outputs the function set (storage queue and
 * blob, through `context.extraOutputs` or a `$return` binding). Types nobody serves are reported once
 * at start-up and then ignored, so an app still runs with the bindings the devhost has.
 */
import type {
  FunctionMetadata,
  NamedBinding,
  RpcBindingInfo,
  RpcInvocationResponse,
  RpcParameterBinding,
  RpcTypedData,
} from '../core/types';
import { text } from '../core/values';
import { type BindingData, resolveBindingExpressions } from './expressions';
import type { StorageClients } from './storage';

export type MessageEncoding = 'base64' | 'none';

function encodeQueueMessage(text: string, encoding: MessageEncoding): string {
  return encoding === 'base64' ? Buffer.from(text, 'utf8').toString('base64') : text;
}

/** Turns an output value (RpcTypedData) into the items it writes: an array is one item each. */
function outputItems(data: RpcTypedData): (string | Buffer)[] {
  if (data.string !== undefined && data.string !== null) return [data.string];
  if (data.json !== undefined && data.json !== null) {
    const value: unknown = JSON.parse(data.json);
    const items = Array.isArray(value) ? (value as unknown[]) : [value];
    return items.map((item) => (typeof item === 'string' ? item : JSON.stringify(item)));
  }
  if (data.bytes !== undefined && data.bytes !== null) return [Buffer.from(data.bytes)];
  if (data.stream !== undefined && data.stream !== null) return [Buffer.from(data.stream)];
  if (data.int !== undefined && data.int !== null) return [String(data.int)];
  if (data.double !== undefined && data.double !== null) return [String(data.double)];
  if (data.collectionString?.string) return data.collectionString.string;
  if (data.collectionBytes?.bytes) return data.collectionBytes.bytes.map((b) => Buffer.from(b));
  if (data.collectionDouble?.double) return data.collectionDouble.double.map(String);
  if (data.collectionSint64?.sint64) return data.collectionSint64.sint64.map(String);
  return [];
}

/** A blob is written whole: JSON stays one document, whatever its shape. */
function blobBody(data: RpcTypedData): Buffer | undefined {
  if (data.json !== undefined && data.json !== null) return Buffer.from(data.json, 'utf8');
  const [first] = outputItems(data);
  return first === undefined ? undefined : typeof first === 'string' ? Buffer.from(first, 'utf8') : first;
}

function splitBlobPath(path: string, where: string): { container: string; blob: string } {
  const trimmed = path.replace(/^\/+/, '');
  const slash = trimmed.indexOf('/');
  if (slash <= 0 || slash === trimmed.length - 1) throw new Error(`${where}: blob path "${path}" must be "container/blob"`);
  return { container: trimmed.slice(0, slash), blob: trimmed.slice(slash + 1) };
}

const builtInInputTypes = new Set(['blob']);
const builtInOutputTypes = new Set(['queue', 'blob', 'http']);

/** A provider of input bindings (the part of a HostProvider this module uses). */
export interface InputProvider {
  readonly bindingTypes: readonly string[];
  inputData?(binding: NamedBinding, fn: FunctionMetadata): RpcTypedData | undefined;
}

export interface BindingIoOptions {
  readonly storage: StorageClients;
  /** The host's providers (read on each use: the list is complete once the host has started). */
  readonly providers: () => readonly InputProvider[];
  readonly queueEncoding: MessageEncoding;
  readonly now: () => number;
  /** Called after a message was written to a queue (lets a listener on that queue poll at once). */
  readonly onQueueWrite?: (queueName: string) => void;
}

export class BindingIo {
  constructor(private readonly options: BindingIoOptions) {}

  private providerFor(type: string | null | undefined): InputProvider | undefined {
    const lower = type?.toLowerCase();
    return this.options.providers().find((e) => e.bindingTypes.some((t) => t.toLowerCase() === lower));
  }

  /** Bindings of `fn` the devhost cannot serve, for the start-up report. */
  unsupported(fn: FunctionMetadata): string[] {
    const out: string[] = [];
    for (const [name, b] of Object.entries(fn.bindings)) {
      const type = (b.type ?? '').toLowerCase();
      if (/trigger$/.test(type)) continue;
      const served = b.direction === 'out' ? builtInOutputTypes.has(type) : builtInInputTypes.has(type);
      if (!served && this.providerFor(type) === undefined) out.push(`${name} (${b.type ?? '?'} ${b.direction ?? 'in'})`);
    }
    return out;
  }

  /** Input data for the function's non-trigger input bindings. */
  async inputData(fn: FunctionMetadata, data: BindingData): Promise<RpcParameterBinding[]> {
    const out: RpcParameterBinding[] = [];
    for (const [name, b] of Object.entries(fn.bindings)) {
      if (b.direction === 'out' || /trigger$/i.test(b.type ?? '')) continue;
      const provider = this.providerFor(b.type);
      if (provider?.inputData !== undefined) {
        const value = provider.inputData({ ...b, name }, fn);
        if (value !== undefined) out.push({ name, data: value });
      } else if (b.type?.toLowerCase() === 'blob') {
        out.push({ name, data: await this.readBlob(fn, b, data) });
      }
    }
    return out;
  }

  private async readBlob(fn: FunctionMetadata, b: RpcBindingInfo, data: BindingData): Promise<RpcTypedData | null> {
    const where = `${fn.name} blob input`;
    const path = resolveBindingExpressions(text(b.path), data, this.options.now(), where);
    const { container, blob } = splitBlobPath(path, where);
    const client = this.options.storage
      .blobService(b.connection as string | undefined)
      .getContainerClient(container)
      .getBlobClient(blob);
    try {
      const bytes = await client.downloadToBuffer();
      return String(b.dataType ?? '').toLowerCase() === 'string' ? { string: bytes.toString('utf8') } : { bytes };
    } catch (err) {
      // A missing blob binds as null, as on the host.
      if ((err as { statusCode?: number }).statusCode === 404) return null;
      throw err;
    }
  }

  /** Writes what the function put in its queue/blob output bindings (and a queue/blob `$return`). */
  async applyOutputs(fn: FunctionMetadata, response: RpcInvocationResponse, data: BindingData): Promise<void> {
    const values: [string, RpcTypedData][] = [];
    for (const o of response.outputData ?? []) if (o.name && o.data) values.push([o.name, o.data]);
    if (response.returnValue && fn.bindings.$return !== undefined) values.push(['$return', response.returnValue]);
    for (const [name, value] of values) {
      const b = fn.bindings[name];
      const type = b?.type?.toLowerCase();
      if (b === undefined || b.direction !== 'out') continue;
      if (type === 'queue') await this.writeQueue(fn, b, value, data);
      else if (type === 'blob') await this.writeBlob(fn, b, value, data);
    }
  }

  private async writeQueue(fn: FunctionMetadata, b: RpcBindingInfo, value: RpcTypedData, data: BindingData): Promise<void> {
    const queueName = resolveBindingExpressions(text(b.queueName), data, this.options.now(), `${fn.name} queue output`).toLowerCase();
    const queue = await this.options.storage.queue(b.connection as string | undefined, queueName);
    for (const item of outputItems(value)) {
      const text = typeof item === 'string' ? item : item.toString('utf8');
      await queue.sendMessage(encodeQueueMessage(text, this.options.queueEncoding));
    }
    this.options.onQueueWrite?.(queueName);
  }

  private async writeBlob(fn: FunctionMetadata, b: RpcBindingInfo, value: RpcTypedData, data: BindingData): Promise<void> {
    const where = `${fn.name} blob output`;
    const path = resolveBindingExpressions(text(b.path), data, this.options.now(), where);
    const { container, blob } = splitBlobPath(path, where);
    const client = (await this.options.storage.container(b.connection as string | undefined, container)).getBlockBlobClient(blob);
    const buffer = blobBody(value);
    if (buffer !== undefined) await client.upload(buffer, buffer.length);
  }
}
