/**
 * Azurite's in-memory extent store, built in this process from its own modules: what its queue
 * service keeps a message body in (one extent per message) and what its minute's sweep deletes from.
 * For the test and the benchmark of devhost/azuriteQueueGc.ts, which compare Azurite's own
 * `deleteExtents` with the one-pass replacement on the same contents.
 */
import { azuritePersistenceDir } from '../../devhost/azurite';
import { batchAzuriteExtentDeletes } from '../../devhost/azuriteQueueGc';

type DeleteExtents = (this: unknown, extents: Iterable<string>) => Promise<number>;

interface ExtentStore {
  init(): Promise<void>;
  appendExtent(data: Buffer): Promise<{ readonly id: string }>;
  deleteExtents(extents: Iterable<string>): Promise<number>;
  readonly chunks: { get(category: string, id: string): unknown };
  readonly categoryName: string;
}

interface ExtentsCollection {
  find(): { id: string }[];
  ensureIndex(property: string, force?: boolean): unknown;
}

interface Modules {
  readonly MemoryExtentStore: new (
    category: string,
    chunks: unknown,
    metadata: unknown,
    logger: unknown,
    makeError: unknown,
  ) => ExtentStore;
  readonly MemoryExtentChunkStore: new (sizeLimit?: number) => unknown;
  readonly LokiExtentMetadataStore: new (
    path: string,
    inMemory: boolean,
  ) => {
    readonly db: { getCollection(name: string): ExtentsCollection | null };
    readonly EXTENTS_COLLECTION: string;
  };
}

function modules(): Modules {
  const dir = azuritePersistenceDir();
  /* eslint-disable @typescript-eslint/no-require-imports -- Azurite's internals, loaded by path as its CLI loads them */
  const memory = require(`${dir}/MemoryExtentStore.js`) as {
    default: Modules['MemoryExtentStore'];
    MemoryExtentChunkStore: Modules['MemoryExtentChunkStore'];
  };
  const loki = require(`${dir}/LokiExtentMetadataStore.js`) as { default: Modules['LokiExtentMetadataStore'] };
  /* eslint-enable @typescript-eslint/no-require-imports */
  return {
    MemoryExtentStore: memory.default,
    MemoryExtentChunkStore: memory.MemoryExtentChunkStore,
    LokiExtentMetadataStore: loki.default,
  };
}

/** Azurite's own `deleteExtents` and the one-pass one, both callable on any store. */
export function deleteExtentsBoth(): { readonly azurite: DeleteExtents; readonly batched: DeleteExtents } {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- as Azurite's launcher passes it
  const why = batchAzuriteExtentDeletes((path) => require(path) as unknown, azuritePersistenceDir());
  if (why !== undefined) throw new Error(`The extent sweep could not be patched: ${why}`);
  const { deleteExtents } = modules().MemoryExtentStore.prototype as unknown as {
    deleteExtents: DeleteExtents & { azurite: DeleteExtents };
  };
  return { azurite: deleteExtents.azurite, batched: deleteExtents };
}

const logger = { info: () => undefined, debug: () => undefined, error: () => undefined, warn: () => undefined, verbose: () => undefined };
const makeError = (status: number, code: string, message: string): Error => new Error(`${status} ${code}: ${message}`);

/** A store holding `n` one-message extents, as Azurite's queue service makes them; their ids in order. */
export async function filledExtentStore(n: number): Promise<{ store: ExtentStore; ids: string[]; collection: ExtentsCollection }> {
  const { MemoryExtentStore, MemoryExtentChunkStore, LokiExtentMetadataStore } = modules();
  const metadata = new LokiExtentMetadataStore(`extents-${n}-${process.hrtime.bigint()}`, true);
  const store = new MemoryExtentStore('queue', new MemoryExtentChunkStore(), metadata, logger, makeError);
  await store.init();
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await store.appendExtent(Buffer.from(`message ${i}`))).id);
  const collection = metadata.db.getCollection(metadata.EXTENTS_COLLECTION);
  if (collection === null) throw new Error('Azurite made no extents collection');
  return { store, ids, collection };
}
