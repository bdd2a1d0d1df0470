import { seededRandom } from '../../../shared/clock';
import {
  bucketMs,
  bucketPartitionKey,
  dataPartitionKey,
  HitKeys,
  hitsBefore,
  hitTime,
  isHitRowKey,
  keyedPartition,
  markerRangeEnd,
  markerRowKey,
  parseBucketPartitionKey,
  parseDataPartitionKey,
  timeKey,
  totalRowKey,
} from '../../../shared/counters/keys';

const t0 = Date.UTC(2026, 0, 1);

describe('counter keys', () => {
  it('orders hit RowKeys by time, then by issue order, and never repeats one', () => {
    const a = new HitKeys(seededRandom(1));
    const b = new HitKeys(seededRandom(2));
    const keys = [a.next(t0), b.next(t0 + 1), a.next(t0 + 1), a.next(t0 + 1), b.next(t0 + 2), a.next(t0 + 1000)];
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys.map(hitTime)).toEqual([t0, t0 + 1, t0 + 1, t0 + 1, t0 + 2, t0 + 1000]);
    const sorted = [...keys].sort();
    expect(sorted.map(hitTime)).toEqual([...keys.map(hitTime)].sort((x, y) => x - y));
    // Within one instance and one millisecond, the sequence part keeps issue order.
    expect(keys[2]! < keys[3]!).toBe(true);
    expect(a.instance).not.toBe(b.instance);
  });

  it('keeps 13-digit time keys in numeric order across digit-count boundaries', () => {
    const times = [0, 9, 10, 999_999_999_999, 1_000_000_000_000, t0];
    const keys = times.map(timeKey);
    expect(keys.every((k) => k.length === 13)).toBe(true);
    expect([...keys].sort()).toEqual(keys.slice().sort((x, y) => Number(x) - Number(y)));
    expect(() => timeKey(-1)).toThrow(RangeError);
    expect(() => timeKey(1.5)).toThrow(RangeError);
  });

  it('puts exactly the hits stamped before a time below its cutoff key', () => {
    const keys = new HitKeys(seededRandom(3));
    const cutoff = hitsBefore(t0);
    expect(keys.next(t0 - 1) < cutoff).toBe(true);
    expect(keys.next(t0) < cutoff).toBe(false);
    expect(keys.next(t0 + 1) < cutoff).toBe(false);
  });

  it('sorts hits, then the total row, then markers, so reads stop before the markers', () => {
    const hit = new HitKeys(seededRandom(4)).next(9_999_999_999_999);
    const marker = markerRowKey('any key at all');
    expect(isHitRowKey(hit)).toBe(true);
    expect(isHitRowKey(totalRowKey)).toBe(false);
    expect(hit < totalRowKey).toBe(true);
    expect(totalRowKey < marker).toBe(true);
    expect(marker < markerRangeEnd).toBe(true);
    expect(markerRowKey('k')).toBe(markerRowKey('k'));
    expect(markerRowKey('k')).not.toBe(markerRowKey('K'));
  });

  it('keys data partitions so one counter is a contiguous range no other counter shares', () => {
    const key = dataPartitionKey('views', 7);
    expect(key).toBe('views|07');
    expect(parseDataPartitionKey(key)).toEqual({ name: 'views', index: 7 });
    expect(parseDataPartitionKey('views')).toBeUndefined();
    const inRange = (pk: string) => pk >= 'views|' && pk < 'views}';
    expect(inRange(dataPartitionKey('views', 0)) && inRange(dataPartitionKey('views', 99))).toBe(true);
    for (const other of ['views2', 'view', 'views.x', 'views-a', 'viewsZ', 'views_']) {
      expect(inRange(dataPartitionKey(other, 0))).toBe(false);
    }
    expect(() => dataPartitionKey('views', 100)).toThrow(RangeError);
  });

  it('sends a key to the same partition every time, spread over all of them', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 400; i++) {
      const p = keyedPartition(`key-${i}`, 8);
      expect(p).toBe(keyedPartition(`key-${i}`, 8));
      expect(p).toBeGreaterThanOrEqual(0);
      expect(p).toBeLessThan(8);
      seen.add(p);
    }
    expect(seen.size).toBe(8);
  });

  it('buckets time by the minute and round-trips bucket keys', () => {
    expect(bucketPartitionKey(t0 + bucketMs - 1)).toBe(bucketPartitionKey(t0));
    expect(bucketPartitionKey(t0 + bucketMs)).not.toBe(bucketPartitionKey(t0));
    expect(parseBucketPartitionKey(bucketPartitionKey(t0 + 5))).toBe(t0);
    expect(parseBucketPartitionKey('views|00')).toBeUndefined();
  });
});
