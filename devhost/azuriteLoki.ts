/**
 * LokiJS, under Azurite, removing nothing without re-sorting every index.
 *
 * Why: Azurite's queue service (3.35.0, the version package.json pins) sweeps a queue's expired
 * messages before every receive, peek, delete and update (queue/persistence/LokiQueueMetadataStore.js
 * `clearExpiredMessages`), and hands LokiJS whatever it found, nearly always nothing, to remove. LokiJS
 * (`Collection.removeBatch` → `removeBatchByPositions`) then copies the collection's array and its
 * id index and, for a collection with adaptive binary indices, rebuilds every one of them at once
 * (`ensureAllIndexes(true)`), removed documents or not. The messages of every queue of the emulator
 * are one collection with four such indices: with the few thousand messages a test run or a
 * benchmark keeps in flight, every queue operation re-sorted thousands of entries four times (a CPU profile of Azurite under the gates
 * benchmark: LokiJS's index sorting and its comparators were about a sixth of Azurite's CPU). Azure
 * Storage has no such cost, so it is the stand-in's artefact, not the app's behaviour.
 *
 * The replacement returns at once when the batch is empty, which removes nothing either way; any
 * other batch goes to LokiJS's own. Nothing else changes.
 *
 * This function runs inside Azurite's process, before Azurite starts (devhost/azurite.ts passes its
 * source to `node -e`), so it must stay self-contained: no imports, nothing from its scope. It answers
 * why it could not patch, or undefined when it did (or had).
 */
export function skipEmptyLokiRemovals(load: (path: string) => unknown, lokiPath: string): string | undefined {
  const loki = load(lokiPath) as { Collection?: { prototype: { removeBatch?: unknown } } };
  const proto = loki.Collection?.prototype;
  if (proto === undefined || typeof proto.removeBatch !== 'function') return 'Collection.removeBatch is not there';
  // Patched already (a second call in one process): LokiJS's own stays the one kept.
  if ('loki' in proto.removeBatch) return undefined;
  const original = proto.removeBatch as (this: unknown, batch: readonly unknown[]) => void;
  const skippingEmpty = function removeBatch(this: unknown, batch: readonly unknown[]): void {
    if (Array.isArray(batch) && batch.length === 0) return;
    original.call(this, batch);
  };
  // LokiJS's own, for a comparison (devhost/test/azuriteLoki.test.ts).
  proto.removeBatch = Object.assign(skippingEmpty, { loki: original });
  return undefined;
}

/**
 * LokiJS, under Azurite, finding a table entity by its keys through the narrower of its two indices.
 *
 * Why: Azurite's table store (3.35.0) looks an entity up by `findOne({ PartitionKey, RowKey })` before
 * every insert, and for every point read, in a collection with a binary index on each key
 * (table/persistence/LokiTableMetadataStore.js). LokiJS uses an index for the query's first key only
 * and checks the second on every document the first matched: an insert into a partition of ten
 * thousand rows (a job's items, a gate's runs) compared ten thousand row keys. A CPU profile of
 * Azurite under five real-host e2e files: these lookups were about a tenth of its CPU. Azure Storage
 * finds an entity by its keys directly, so the cost is the stand-in's artefact, not the app's.
 *
 * The replacement asks each index how many documents hold the key (a binary search) and puts the key
 * with fewer first. The answer cannot change: a table holds at most one entity per key pair, so the
 * first match is the only one, whichever key narrows first. Any other query is LokiJS's own.
 *
 * Self-contained for the same reason as the one above. It answers why it could not patch, or
 * undefined when it did (or had).
 */
export function keyLookupsByNarrowerIndex(load: (path: string) => unknown, lokiPath: string): string | undefined {
  type Range = readonly [number, number];
  interface Keyed {
    readonly binaryIndices: Record<string, unknown>;
    calculateRange(op: '$eq', property: string, value: unknown): Range;
  }
  const loki = load(lokiPath) as { Collection?: { prototype: { findOne?: unknown; calculateRange?: unknown } } };
  const proto = loki.Collection?.prototype;
  if (proto === undefined || typeof proto.findOne !== 'function' || typeof proto.calculateRange !== 'function')
    return 'Collection.findOne or calculateRange is not there';
  if ('loki' in proto.findOne) return undefined;
  const original = proto.findOne as (this: unknown, query: unknown) => unknown;
  const matches = (coll: Keyed, property: string, value: unknown): number => {
    const [from, to] = coll.calculateRange('$eq', property, value);
    return Math.max(0, to - from + 1);
  };
  // Only the lookup by exactly the two keys, in Azurite's order: its answer is one entity or none.
  const isKeyLookup = (q: unknown): q is { PartitionKey: string; RowKey: string } => {
    if (typeof q !== 'object' || q === null) return false;
    const keys = Object.keys(q);
    const { PartitionKey, RowKey } = q as Record<string, unknown>;
    return (
      keys.length === 2 &&
      keys[0] === 'PartitionKey' &&
      keys[1] === 'RowKey' &&
      typeof PartitionKey === 'string' &&
      typeof RowKey === 'string'
    );
  };
  const narrowerFirst = function findOne(this: Keyed, query: unknown): unknown {
    const byRowKey =
      isKeyLookup(query) &&
      'PartitionKey' in this.binaryIndices &&
      'RowKey' in this.binaryIndices &&
      matches(this, 'RowKey', query.RowKey) < matches(this, 'PartitionKey', query.PartitionKey);
    return original.call(this, byRowKey ? { RowKey: query.RowKey, PartitionKey: query.PartitionKey } : query);
  };
  proto.findOne = Object.assign(narrowerFirst, { loki: original });
  return undefined;
}
