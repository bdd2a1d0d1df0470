import { seededRandom } from '../../../shared/clock';
import { ShardPicker } from '../../../shared/counters/shardPicker';

describe('ShardPicker', () => {
  it('gives concurrent writers of one instance different shards while there are free ones', () => {
    const picker = new ShardPicker(seededRandom(1));
    const taken = Array.from({ length: 8 }, () => picker.take('c', 8));
    expect(new Set(taken).size).toBe(8);
    // All busy once: the ninth doubles up, then the tenth goes elsewhere.
    const ninth = picker.take('c', 8);
    expect(picker.take('c', 8)).not.toBe(ninth);
  });

  it('frees a shard on release and keeps counters apart', () => {
    const picker = new ShardPicker(seededRandom(2));
    const first = picker.take('a', 2);
    const second = picker.take('a', 2);
    expect(second).toBe(1 - first);
    picker.release('a', first);
    expect(picker.take('a', 2)).toBe(first);
    expect([picker.take('b', 2), picker.take('b', 2)].sort()).toEqual([0, 1]);
  });

  it('spreads a lone writer over every shard', () => {
    const picker = new ShardPicker(seededRandom(3));
    const seen = new Set<number>();
    for (let i = 0; i < 200; i++) {
      const index = picker.take('c', 4);
      seen.add(index);
      picker.release('c', index);
    }
    expect(seen.size).toBe(4);
  });
});
