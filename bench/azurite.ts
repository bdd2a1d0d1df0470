/**
 * Azurite's extent sweep: what its minute's queue garbage collection costs after a busy queue, with
 * Azurite's own `deleteExtents` (one LokiJS removal and index re-sort per extent) and the one-pass
 * one the devhost runs it with (devhost/azuriteQueueGc.ts), on the same contents: `n` one-message
 * extents, four in five of them no longer referred to. The sweep holds Azurite's one event loop for
 * its whole length, so its time is how long every storage request of a run waits when it comes.
 * The baseline is the one-pass sweep; the ratio is how many times longer Azurite's own holds the
 * loop. In this process, not in Azurite's: the same code on the same data, without the HTTP around.
 *
 *   AZURITE_BENCH_SIZES=2000,10000 (default)
 */
import { performance } from 'node:perf_hooks';

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
}

void main();
