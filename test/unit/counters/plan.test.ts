import { seededRandom } from '../../../shared/clock';
import { bucketMs, HitKeys, hitsBefore } from '../../../shared/counters/keys';
import { finishedBuckets, type HitRow, maxHitsPerTransaction, partitionValue, planFold } from '../../../shared/counters/plan';
import { applyChange, emptyTotal, type Total } from '../../../shared/counters/total';

const t0 = Date.UTC(2026, 0, 1);

function hits(n: number, start = t0): HitRow[] {
  const keys = new HitKeys(seededRandom(n));
  return Array.from({ length: n }, (_, i) => ({ rowKey: keys.next(start + i), by: (i % 5) + 1 }));
}

describe('planFold', () => {
  it('splits hits into transactions of at most 99 in RowKey order, the watermark following the last folded', () => {
    const rows = hits(250);
    const steps = planFold('', [...rows].reverse());
    expect(steps.map((s) => s.deletes.length)).toEqual([99, 99, 52]);
    expect(steps.every((s) => s.deletes.length <= maxHitsPerTransaction)).toBe(true);
    expect(steps.map((s) => s.watermark)).toEqual([rows[98]!.rowKey, rows[197]!.rowKey, rows[249]!.rowKey]);
    expect(steps.flatMap((s) => s.deletes)).toEqual(rows.map((r) => r.rowKey));
    expect(steps.reduce((sum, s) => sum + s.delta, 0)).toBe(rows.reduce((sum, r) => sum + r.by, 0));
  });

  it('folds a late hit (below the watermark) first and never lowers the watermark', () => {
    const rows = hits(3);
    const steps = planFold(rows[1]!.rowKey, [rows[0]!], 99);
    expect(steps).toEqual([{ deletes: [rows[0]!.rowKey], delta: rows[0]!.by, watermark: rows[1]!.rowKey }]);
    expect(planFold('w', [])).toEqual([]);
  });
});

describe('partitionValue', () => {
  const rows = hits(4);
  const total: Total = { ...emptyTotal, count: 100, watermark: rows[1]!.rowKey, etag: 'e' };

  it('counts hits above the watermark on a visible read and skips those at or below it', () => {
    expect(partitionValue(total, rows, 'visible')).toEqual({ value: 100 + rows[2]!.by + rows[3]!.by, pending: 2, late: 2 });
  });

  it('counts every present hit on a full read', () => {
    expect(partitionValue(total, rows, 'all')).toEqual({ value: 100 + rows.reduce((s, r) => s + r.by, 0), pending: 4, late: 0 });
  });
});

describe('finishedBuckets', () => {
  it('releases a bucket only once it ended at or before the cutoff', () => {
    expect(finishedBuckets([t0, t0 + bucketMs, t0 + 2 * bucketMs], t0 + bucketMs)).toEqual([t0]);
    expect(finishedBuckets([t0], t0 + bucketMs - 1)).toEqual([]);
  });
});

/**
 * The proof, executed: a model of one partition where a fold transaction is atomic and conditional
 * on the total's version (as storage makes it), driven by random interleavings of writers (some with
 * clocks far behind), two rollups that race, crash half way and restart, and paging readers.
 */
describe('folding under races, crashes and clock skew (model on a fake clock)', () => {
  const safetyMs = 50;

  interface Rollup {
    phase: 'idle' | 'read' | 'folding';
    cutoff: number;
    total?: Total;
    steps: ReturnType<typeof planFold>;
  }

  interface Reader {
    startedTruth: number;
    seen: HitRow[];
  }

  function simulate(seed: number, lateWriters: boolean) {
    const random = seededRandom(seed);
    const keys = [new HitKeys(random), new HitKeys(random), new HitKeys(random)];
    const rows = new Map<string, number>();
    let total: Total = { ...emptyTotal, etag: 'v0' };
    let now = t0;
    let inserted = 0;
    let lateInserted = 0;
    const rollups: Rollup[] = [
      { phase: 'idle', cutoff: 0, steps: [] },
      { phase: 'idle', cutoff: 0, steps: [] },
    ];
    const readers: Reader[] = [];
    const reads: { value: number; low: number; high: number }[] = [];
    let folds = 0;
    let lost = 0;

    for (let step = 0; step < 400; step++) {
      now += Math.floor(random() * 3);
      const action = random();
      if (action < 0.4) {
        const late = lateWriters && random() < 0.15;
        const skew = late ? safetyMs + Math.floor(random() * 3 * safetyMs) : Math.floor(random() * safetyMs);
        const by = 1 + Math.floor(random() * 9);
        rows.set(keys[Math.floor(random() * keys.length)]!.next(now - skew), by);
        inserted += by;
        if (late) lateInserted++;
      } else if (action < 0.75) {
        const r = rollups[Math.floor(random() * rollups.length)]!;
        if (r.phase === 'idle') {
          r.cutoff = now - safetyMs;
          r.total = total;
          r.phase = 'read';
        } else if (r.phase === 'read') {
          const cutoffKey = hitsBefore(r.cutoff);
          const due = [...rows.entries()].filter(([k]) => k < cutoffKey).map(([rowKey, by]) => ({ rowKey, by }));
          r.steps = planFold(r.total!.watermark, due, 1 + Math.floor(random() * 4));
          r.phase = r.steps.length > 0 ? 'folding' : 'idle';
        } else {
          const next = r.steps.shift()!;
          // One entity-group transaction: all of it applies, or none of it does.
          const current = r.total!;
          if (current.etag !== total.etag || next.deletes.some((k) => !rows.has(k))) {
            lost++;
            r.phase = 'idle';
          } else {
            for (const k of next.deletes) rows.delete(k);
            total = {
              ...applyChange(current, { delta: next.delta, opId: `f${folds}`, watermark: next.watermark, rolledTo: r.cutoff }),
              etag: `v${++folds}`,
            };
            r.total = total;
            if (r.steps.length === 0) r.phase = 'idle';
          }
        }
      } else if (action < 0.8) {
        // A rollup dies wherever it was.
        rollups[Math.floor(random() * rollups.length)]!.phase = 'idle';
      } else if (action < 0.9) {
        // A reader's hit pages come first...
        readers.push({ startedTruth: inserted, seen: [...rows.entries()].map(([rowKey, by]) => ({ rowKey, by })) });
      } else if (readers.length > 0) {
        // ...and the total row, which sorts last, some time later.
        const reader = readers.shift()!;
        reads.push({ value: partitionValue(total, reader.seen, 'visible').value, low: reader.startedTruth, high: inserted });
      }
      // Every hit is a present row or part of the count: never both, never neither.
      let present = 0;
      for (const by of rows.values()) present += by;
      if (total.count + present !== inserted) expect({ step, counted: total.count + present }).toEqual({ step, counted: inserted });
    }
    return { reads, lost, folds, lateInserted, rows, total, inserted };
  }

  it('never loses or double-counts a hit, and reads stay between the truth when they started and ended', () => {
    let races = 0;
    let folds = 0;
    for (let seed = 1; seed <= 100; seed++) {
      const { reads, lost, folds: f } = simulate(seed, false);
      races += lost;
      folds += f;
      expect(reads.filter((read) => read.value < read.low || read.value > read.high)).toEqual([]);
    }
    // The runs did exercise the races they claim to.
    expect(races).toBeGreaterThan(100);
    expect(folds).toBeGreaterThan(1000);
  });

  it('with writers behind by more than the safety window: no loss, no double count; reads may lag, never overshoot', () => {
    let late = 0;
    for (let seed = 1; seed <= 100; seed++) {
      const result = simulate(seed, true);
      late += result.lateInserted;
      expect(result.reads.filter((read) => read.value > read.high)).toEqual([]);
      // A last fold with the cutoff past every stamp folds the late ones too: the count becomes exact.
      const due = [...result.rows.entries()].map(([rowKey, by]) => ({ rowKey, by }));
      const folded = planFold(result.total.watermark, due).reduce(
        (t, s) => applyChange(t, { delta: s.delta, opId: 'x', watermark: s.watermark }),
        result.total,
      );
      expect(folded.count).toBe(result.inserted);
    }
    expect(late).toBeGreaterThan(100);
  });
});
