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
