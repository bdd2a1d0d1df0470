/**
 * Two of Azurite's in-memory costs, each against the devhost's patch of it, in this process.
 *
 * Azurite's extent sweep: what its minute's queue garbage collection costs after a busy queue, with
 * Azurite's own `deleteExtents` (one LokiJS removal and index re-sort per extent) and the one-pass
 * one the devhost runs it with (devhost/azuriteQueueGc.ts), on the same contents: `n` one-message
 * extents, four in five of them no longer referred to. The sweep holds Azurite's one event loop for
 * its whole length, so its time is how long every storage request of a run waits when it comes.
 * The baseline is the one-pass sweep; the ratio is how many times longer Azurite's own holds the
 * loop. In this process, not in Azurite's: the same code on the same data, without the HTTP around.
 *
 * Azurite's table inserts: before each insert Azurite's table store looks the entity up by both keys
 * (`findOne({ PartitionKey, RowKey })`), so filling one partition of `n` rows (a job's items, a
 * gate's runs) with LokiJS's own lookup (the partition key's index, then every row of the partition
 * compared) and with the devhost's (the narrower index first: devhost/azuriteLoki.ts). The baseline
 * is the devhost's; the ratio is how many times the CPU Azurite's own takes for the same inserts.
 *
 *   AZURITE_BENCH_SIZES=2000,10000 (default)
 */
import { performance } from 'node:perf_hooks';

import { azuriteLokiPath } from '../devhost/azurite';
import { keyLookupsByNarrowerIndex } from '../devhost/azuriteLoki';
import { deleteExtentsBoth, filledExtentStore } from '../test/support/azuriteExtents';
import { fmt, header, ratio, type Row, table } from './support/report';

const sizes = (process.env.AZURITE_BENCH_SIZES ?? '2000,10000').split(',').map(Number);

async function sweepMs(which: 'azurite' | 'batched', n: number): Promise<number> {
  const { store, ids } = await filledExtentStore(n);
  const unreferenced = new Set(ids.filter((_, i) => i % 5 !== 0));
  const sweep = deleteExtentsBoth()[which];
  const started = performance.now();
  await sweep.call(store, unreferenced);
  return performance.now() - started;
}

interface Entities {
  insert(doc: object): unknown;
  findOne: ((query: object) => unknown) & { loki?: (query: object) => unknown };
}
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the very LokiJS Azurite loads, by path
const load = (path: string): unknown => require(path);

/** `n` inserts into one partition, each after a lookup by both keys, as Azurite's insertTableEntity does them. */
function fillMs(which: 'azurite' | 'narrower', n: number): number {
  const Loki = load(azuriteLokiPath()) as new (name: string) => { addCollection(name: string, options: object): Entities };
  const coll = new Loki('bench').addCollection('entities', { indices: ['PartitionKey', 'RowKey'] });
  const lookUp = which === 'narrower' ? coll.findOne.bind(coll) : (q: object): unknown => coll.findOne.loki?.call(coll, q);
  const started = performance.now();
  for (let i = 0; i < n; i++) {
    const keys = { PartitionKey: 'job', RowKey: `item-${String(i).padStart(6, '0')}` };
    if (lookUp(keys) !== null) throw new Error('a duplicate key');
    coll.insert({ ...keys, value: i });
  }
  return performance.now() - started;
}

async function main(): Promise<void> {
  header('azurite');
  const rows: Row[] = [];
  for (const n of sizes) {
    // Warmed once each at the smallest size, so neither side pays the other's compilation.
    await sweepMs('batched', 200);
    await sweepMs('azurite', 200);
    const batched = await sweepMs('batched', n);
    const own = await sweepMs('azurite', n);
    ratio(`Azurite's own sweep of ${fmt(n * 0.8, 0)} of ${fmt(n, 0)} extents vs one pass`, own, batched);
    rows.push({ extents: n, deleted: n * 0.8, "Azurite's own ms": own, 'one pass ms': batched });
  }
  table('The extent sweep (ms the event loop is held), in this process', rows);

  const why = keyLookupsByNarrowerIndex(load, azuriteLokiPath());
  if (why !== undefined) throw new Error(`LokiJS could not be patched: ${why}`);
  const inserts: Row[] = [];
  for (const n of sizes) {
    fillMs('narrower', 200);
    fillMs('azurite', 200);
    const narrower = fillMs('narrower', n);
    const own = fillMs('azurite', n);
    ratio(`Azurite's own lookups filling a partition of ${fmt(n, 0)} rows vs the narrower index`, own, narrower);
    inserts.push({ rows: n, "Azurite's own ms": own, 'narrower index ms': narrower });
  }
  table('Inserts into one partition, each after a lookup by both keys (ms), in this process', inserts);
}

void main();
