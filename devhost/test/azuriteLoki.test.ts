/**
 * LokiJS under Azurite (devhost/azuriteLoki.ts), patched twice:
 * - removing nothing without re-sorting every index: an empty removal leaves the collection and its
 *   indices as they were, where LokiJS's own flags every binary index for a rebuild; a real removal is
 *   LokiJS's own;
 * - finding a table entity by its keys through the narrower index: the same answer as LokiJS's own for
 *   every lookup, present or not, with far fewer documents compared in a large partition;
 * and the launcher runs Azurite with both. The cost itself shows in `npm run bench` (Azurite's CPU),
 * never here.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

import { azuriteLokiPath, exitWithParent } from '../azurite';
import { keyLookupsByNarrowerIndex, skipEmptyLokiRemovals } from '../azuriteLoki';

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

/** The calls `target[method]` received while `work` ran (the method itself still runs). */
function callsDuring<T extends object, K extends keyof T & string>(target: T, method: K, work: () => unknown): unknown[][] {
  const spy = jest.spyOn(target, method as never);
  work();
  const calls = spy.mock.calls as unknown[][];
  spy.mockRestore();
  return calls;
}

/** The indices `remove` re-sorted, in order. */
const resorted = (coll: Collection, remove: () => void): unknown[] => callsDuring(coll, 'ensureIndex', remove).map(([name]) => name);

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

  test('the launcher runs Azurite with it: its script patches before the CLI loads', () => {
    const cli = join(__dirname, 'fixtures', 'azurite', 'reportLoki.cjs');
    const run = spawnSync(process.execPath, ['-e', exitWithParent, '--', cli, azuriteLokiPath()], { input: '', encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({ skipsEmpty: true, narrowerKey: true });
  });
});

interface Entity {
  readonly PartitionKey: string;
  readonly RowKey: string;
  readonly n: number;
}
interface EntityCollection {
  insert(doc: object): Entity;
  findOne: ((query: object) => Entity | null) & { loki?: (query: object) => Entity | null };
}

/**
 * A table's entities as Azurite's table store keeps them (a binary index on each key, adaptive): one
 * partition of `big` rows (a job's items), and `small` partitions whose rows share their row keys
 * with each other (a Durable history: every instance has its row "0000000000000000").
 */
function entities(big: number, small: number): EntityCollection {
  const coll = new Loki('test').addCollection('entities', { indices: ['PartitionKey', 'RowKey'] }) as unknown as EntityCollection;
  let n = 0;
  for (let i = 0; i < big; i++) coll.insert({ PartitionKey: 'job', RowKey: `item-${String(i).padStart(5, '0')}`, n: n++ });
  for (let p = 0; p < small; p++)
    for (let r = 0; r < 3; r++) coll.insert({ PartitionKey: `instance-${p}`, RowKey: String(r).padStart(16, '0'), n: n++ });
  return coll;
}

/** How many documents LokiJS checked one by one (its `$eq`, not an index) while `find` ran. */
const checked = (find: () => unknown): number =>
  callsDuring((Loki as unknown as { LokiOps: { $eq: (a: unknown, b: unknown) => boolean } }).LokiOps, '$eq', find).length;

describe('LokiJS under Azurite: a lookup by both keys goes through the narrower index', () => {
  beforeAll(() => {
    expect(keyLookupsByNarrowerIndex(load, azuriteLokiPath())).toBeUndefined();
  });

  test('every lookup answers as LokiJS’s own does: present, absent, in a large partition or a small one', () => {
    const coll = entities(2000, 200);
    const own = coll.findOne.loki;
    expect(own).toBeDefined();
    const queries = [
      { PartitionKey: 'job', RowKey: 'item-01234' },
      { PartitionKey: 'job', RowKey: 'item-99999' },
      { PartitionKey: 'instance-7', RowKey: '0000000000000001' },
      { PartitionKey: 'instance-7', RowKey: '0000000000000009' },
      { PartitionKey: 'nobody', RowKey: 'item-00001' },
      { PartitionKey: 'job', RowKey: '0000000000000000' },
    ];
    for (const q of queries) expect(coll.findOne(q)).toBe(own?.call(coll, q) ?? null);
    expect(coll.findOne(queries[0]!)?.n).toBe(1234);
    expect(coll.findOne(queries[2]!)?.n).toBe(2000 + 7 * 3 + 1);
  });

  test('in a partition of 2,000 rows the row key narrows: a handful of checks where LokiJS’s own checks every row', () => {
    const coll = entities(2000, 200);
    const q = { PartitionKey: 'job', RowKey: 'item-01234' };
    expect(checked(() => coll.findOne.loki?.call(coll, q))).toBeGreaterThanOrEqual(2000);
    expect(checked(() => coll.findOne(q))).toBeLessThanOrEqual(2);
  });

  test('where every partition shares its row keys the partition key narrows, as in LokiJS’s own', () => {
    const coll = entities(0, 200);
    const q = { PartitionKey: 'instance-7', RowKey: '0000000000000001' };
    expect(checked(() => coll.findOne(q))).toBeLessThanOrEqual(3);
    expect(checked(() => coll.findOne.loki?.call(coll, q))).toBeLessThanOrEqual(3);
  });

  test('any other query is LokiJS’s own', () => {
    const coll = entities(100, 10);
    expect(coll.findOne({ RowKey: 'item-00042', PartitionKey: 'job' })?.n).toBe(42);
    expect(coll.findOne({ PartitionKey: 'job' })?.PartitionKey).toBe('job');
    expect(coll.findOne({ PartitionKey: 'job', RowKey: { $gt: 'item-00098' } })?.n).toBe(99);
  });
});

test.each([
  ['removeBatch', skipEmptyLokiRemovals],
  ['findOne', keyLookupsByNarrowerIndex],
] as const)('a second patch of %s keeps LokiJS’s own', (method, patch) => {
  const proto = Loki.Collection.prototype as unknown as Record<string, { loki?: unknown }>;
  expect(patch(load, azuriteLokiPath())).toBeUndefined();
  const own = proto[method]?.loki;
  expect(own).toBeInstanceOf(Function);
  expect(patch(load, azuriteLokiPath())).toBeUndefined();
  expect(proto[method]?.loki).toBe(own);
});
