/**
 * Azurite's in-memory garbage collection, one pass instead of one per message.
 *
 * Why: in memory, Azurite (3.35.0, the version package.json pins) keeps every queue message's body
 * as an extent of its own, and every minute a sweep deletes the extents no message refers to any
 * more (queue/gc/QueueGCManager.js). It deletes them one at a time, and each deletion makes LokiJS
 * filter the whole extents collection and re-sort its `id` index
 * (common/persistence/MemoryExtentStore.js `deleteExtents` → LokiExtentMetadataStore `deleteExtent`
 * → `findAndRemove` → `removeBatchByPositions`, which flags the adaptive index dirty, and
 * `ensureAllIndexes`). After a few thousand messages were received and deleted that sweep holds
 * Azurite's one event loop for seconds: a CPU profile of Azurite under the gates benchmark showed
 * 4–6 s at 100% of a core, every request to any of its services waiting, every minute. Azure
 * Storage has no such pause, so it is the stand-in's artefact, not the app's behaviour.
 *
 * The replacement deletes the same extents, the chunks and then their metadata in one LokiJS
 * removal (one filter, one index rebuild). Nothing else changes: the sweep still runs every minute
 * and decides what to delete, and the file-backed store (`--location`) is left as it is (it keeps
 * many messages per extent file).
 *
 * This function runs inside Azurite's process, before Azurite starts (devhost/azurite.ts passes
 * its source to `node -e`), so it must stay self-contained: no imports, nothing from its scope.
 * It answers why it could not patch, or undefined when it did (or had).
 */
export function batchAzuriteExtentDeletes(load: (path: string) => unknown, persistenceDir: string): string | undefined {
  interface Collection {
    chain(): { where(test: (doc: { id?: unknown }) => boolean): { remove(): unknown } };
  }
  interface Store {
    categoryName: string;
    chunks: { delete(category: string, id: string): boolean };
    metadataStore: { db?: { getCollection(name: string): Collection | null }; EXTENTS_COLLECTION?: string };
  }
  const memory = load(`${persistenceDir}/MemoryExtentStore.js`) as { default?: { prototype: { deleteExtents?: unknown } } };
  const proto = memory.default?.prototype;
  if (proto === undefined || typeof proto.deleteExtents !== 'function') return 'MemoryExtentStore.deleteExtents is not there';
  // Patched already (a second call in one process): Azurite's own stays the one kept.
  if ('azurite' in proto.deleteExtents) return undefined;
  const original = proto.deleteExtents as (this: Store, extents: Iterable<string>) => Promise<number>;
  const batched = function deleteExtents(this: Store, extents: Iterable<string>): Promise<number> {
    const metadata = this.metadataStore;
    const name = metadata.EXTENTS_COLLECTION;
    const collection = name === undefined ? null : (metadata.db?.getCollection(name) ?? null);
    // A metadata store of another shape: its own way, one at a time.
    if (collection === null) return original.call(this, extents);
    const ids = new Set(extents);
    for (const id of ids) this.chunks.delete(this.categoryName, id);
    collection
      .chain()
      .where((doc) => typeof doc.id === 'string' && ids.has(doc.id))
      .remove();
    return Promise.resolve(ids.size);
  };
  // Azurite's own, for a comparison (test/support/azuriteExtents.ts).
  proto.deleteExtents = Object.assign(batched, { azurite: original });
  return undefined;
}
