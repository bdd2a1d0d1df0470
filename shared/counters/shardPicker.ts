/**
 * Which shard a `sharded` increment goes to. Writers on one instance spread over the shards this
 * instance is not writing to at the moment (random among the least busy), so they do not make each
 * other lose ETag races; only writers on other instances can.
 */
import type { Random } from '../clock';

export class ShardPicker {
  private readonly busy = new Map<string, number>();

  constructor(private readonly random: Random) {}

  /** Takes the least busy of `partitions` shards of `name`; call `release` with it when done. */
  take(name: string, partitions: number): number {
    let least = Infinity;
    let candidates: number[] = [];
    for (let i = 0; i < partitions; i++) {
      const n = this.busy.get(`${name}/${i}`) ?? 0;
      if (n < least) {
        least = n;
        candidates = [i];
      } else if (n === least) {
        candidates.push(i);
      }
    }
    const index = candidates[Math.floor(this.random() * candidates.length)] ?? 0;
    this.busy.set(`${name}/${index}`, least + 1);
    return index;
  }

  release(name: string, index: number): void {
    const id = `${name}/${index}`;
    const n = (this.busy.get(id) ?? 1) - 1;
    if (n <= 0) this.busy.delete(id);
    else this.busy.set(id, n);
  }
}
