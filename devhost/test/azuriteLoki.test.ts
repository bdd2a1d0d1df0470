/**
 * LokiJS under Azurite removing nothing without re-sorting every index (devhost/azuriteLoki.ts): an
 * empty removal leaves the collection and its indices as they were, where LokiJS's own flags every
 * binary index for a rebuild; a real removal is LokiJS's own; and the launcher runs Azurite with it.
 * The cost itself shows in `npm run bench -- gates` (Azurite's CPU per action), never here.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

import { azuriteLokiPath, exitWithParent } from '../azurite';
import { skipEmptyLokiRemovals } from '../azuriteLoki';

interface Doc {
  readonly $loki: number;
  readonly queueName: string;
  readonly visibleTime: number;
}
interface Collection {
  insert(doc: object): Doc;
  remove(doc: Doc | Doc[]): void;
  find(query?: object): Doc[];
  ensureIndex(property: string, force?: boolean): void;
  removeBatch: ((batch: Doc[]) => void) & { loki?: (batch: Doc[]) => void };
}
interface LokiModule {
  new (name: string): { addCollection(name: string, options: object): Collection };
  readonly Collection: { readonly prototype: Collection };
}

/** Loads a module by path, as the launcher's script does inside Azurite. */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the very LokiJS Azurite loads, by path
const load = (path: string): unknown => require(path);
const Loki = load(azuriteLokiPath()) as LokiModule;

/** A messages collection as Azurite's queue store makes it (binary indices, adaptive), filled and queried once. */
function messages(n: number): Collection {
  const coll = new Loki('test').addCollection('messages', { indices: ['queueName', 'visibleTime'] });
  for (let i = 0; i < n; i++) coll.insert({ queueName: `q${i % 3}`, visibleTime: n - i });
  coll.find({ queueName: 'q1' });
  return coll;
}

/** The indices `remove` re-sorted, in order. */
function resorted(coll: Collection, remove: () => void): string[] {
  const sorts = jest.spyOn(coll, 'ensureIndex');
  remove();
  const names = sorts.mock.calls.map(([name]) => name);
  sorts.mockRestore();
  return names;
}

describe('LokiJS under Azurite: an empty removal re-sorts nothing', () => {
  beforeAll(() => {
    expect(skipEmptyLokiRemovals(load, azuriteLokiPath())).toBeUndefined();
  });

  // LokiJS 1.5's code, as Azurite 3.35.0 calls it from every queue operation (clearExpiredMessages):
  // an adaptive collection rebuilds every binary index at once (removeBatchByPositions, ensureAllIndexes).
  test("LokiJS's own re-sorts every binary index when it removes nothing", () => {
    const coll = messages(50);
    const own = Loki.Collection.prototype.removeBatch.loki;
    expect(own).toBeDefined();
    expect(resorted(coll, () => own?.call(coll, [])).sort()).toEqual(['queueName', 'visibleTime']);
    expect(coll.find()).toHaveLength(50);
  });

  test('the patched one re-sorts nothing and leaves the collection as it was', () => {
    const coll = messages(50);
    expect(resorted(coll, () => coll.remove([]))).toEqual([]);
    expect(coll.find()).toHaveLength(50);
    expect(coll.find({ queueName: 'q1' })).toHaveLength(17);
  });

  test('a removal of some documents is still LokiJS’s own: they are gone and the queries answer without them', () => {
    const coll = messages(50);
    const gone = coll.find({ queueName: 'q2' });
    coll.remove(gone);
    expect(coll.find()).toHaveLength(50 - gone.length);
    expect(coll.find({ queueName: 'q2' })).toEqual([]);
    expect(coll.find({ visibleTime: { $gt: 0 } }).map((d) => d.queueName)).not.toContain('q2');
  });

  test('a second patch keeps LokiJS’s own', () => {
    const before = Loki.Collection.prototype.removeBatch.loki;
    expect(skipEmptyLokiRemovals(load, azuriteLokiPath())).toBeUndefined();
    expect(Loki.Collection.prototype.removeBatch.loki).toBe(before);
  });

  test('the launcher runs Azurite with it: its script patches before the CLI loads', () => {
    const cli = join(__dirname, 'fixtures', 'azurite', 'reportLoki.cjs');
    const run = spawnSync(process.execPath, ['-e', exitWithParent, '--', cli, azuriteLokiPath()], { input: '', encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({ skipsEmpty: true });
  });
});
