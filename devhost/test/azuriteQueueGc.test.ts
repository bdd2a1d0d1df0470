/**
 * Azurite's extent sweep in one pass (devhost/azuriteQueueGc.ts): it deletes exactly what Azurite's
 * own deletes, re-sorts the extents' index once instead of once per extent, and is what the launcher
 * runs Azurite with. The cost itself is measured by `npm run bench -- azurite`, never here.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

import { deleteExtentsBoth, filledExtentStore } from '../../test/support/azuriteExtents';
import { azuritePersistenceDir, exitWithParent } from '../azurite';

/** Every fifth extent kept, the rest deleted: what a sweep after a busy queue finds. */
const swept = (ids: readonly string[]): string[] => ids.filter((_, i) => i % 5 !== 0);

async function sweepWith(which: 'azurite' | 'batched', n: number) {
  const { store, ids, collection } = await filledExtentStore(n);
  const sweep = deleteExtentsBoth()[which];
  const rebuilds = jest.spyOn(collection, 'ensureIndex');
  const deleted = await sweep.call(store, new Set(swept(ids)));
  return {
    deleted,
    rebuilds: rebuilds.mock.calls.length,
    left: collection.find().map((e) => e.id),
    chunksLeft: ids.filter((id) => store.chunks.get(store.categoryName, id) !== undefined),
    kept: ids.filter((_, i) => i % 5 === 0),
  };
}

describe("Azurite's extent sweep, one pass", () => {
  test('deletes the same extents as Azurite’s own, chunks and metadata, and keeps the rest', async () => {
    const own = await sweepWith('azurite', 200);
    const batched = await sweepWith('batched', 200);
    for (const result of [own, batched]) {
      expect(result.deleted).toBe(160);
      expect(result.left.sort()).toEqual([...result.kept].sort());
      expect(result.chunksLeft).toEqual(result.kept);
    }
  });

  // Azurite 3.35.0's code: each deletion's findAndRemove flags the `id` index dirty and rebuilds it.
  test('re-sorts the extents’ index once, where Azurite’s own does so once per deleted extent', async () => {
    expect((await sweepWith('azurite', 200)).rebuilds).toBeGreaterThanOrEqual(160);
    expect((await sweepWith('batched', 200)).rebuilds).toBeLessThanOrEqual(1);
  });

  test('an empty sweep deletes nothing', async () => {
    const { store, ids, collection } = await filledExtentStore(3);
    expect(await deleteExtentsBoth().batched.call(store, new Set())).toBe(0);
    expect(collection.find()).toHaveLength(ids.length);
  });

  test('the launcher runs Azurite with it: its script patches before the CLI loads', () => {
    const cli = join(__dirname, 'fixtures', 'azurite', 'reportSweep.cjs');
    const run = spawnSync(process.execPath, ['-e', exitWithParent, '--', cli, azuritePersistenceDir()], { input: '', encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({ batched: true });
  });
});
