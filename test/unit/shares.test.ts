/**
 * Fair shares in an in-memory pool (shared/shares.ts): one identity filling a pool cannot
 * keep another out, and nobody ever holds more than its share or the pool more than its capacity.
 */
import fc from 'fast-check';

import { sharesBlock, sharesMarkdown } from '../../docgen/sharesDoc';
import { HeldPool, limitsOf, shareOf, verdict } from '../../shared/shares';
import { docBlockCells, tableCells } from '../support/generatedBlocks';

describe('share figures', () => {
  test('a quarter of the capacity, never less than one place', () => {
    expect(shareOf(2000)).toEqual({ capacity: 2000, share: 500 });
    expect(shareOf(10_000)).toEqual({ capacity: 10_000, share: 2500 });
    expect(shareOf(2)).toEqual({ capacity: 2, share: 1 });
    expect(limitsOf(10, 250)).toEqual({ capacity: 10, share: 10 });
  });

  test('an identity at its share is told so before the pool is full', () => {
    expect(verdict({ capacity: 4, share: 1 }, 1, 1)).toBe('overShare');
    expect(verdict({ capacity: 4, share: 2 }, 4, 1)).toBe('full');
    expect(verdict({ capacity: 4, share: 2 }, 3, 1)).toBe('admit');
  });
});

describe('a refusing pool', () => {
  test('one identity filling its share is refused, another is still admitted', () => {
    const pool = new HeldPool(() => shareOf(8), 'refuse');
    expect([1, 2].map(() => pool.admit('a').ok)).toEqual([true, true]);
    expect(pool.admit('a')).toEqual({ ok: false, why: 'overShare' });
    expect(pool.admit('b').ok).toBe(true);
    expect(pool.held('a')).toBe(2);
  });

  test('a released place can be taken again, and releasing twice frees one place', () => {
    const pool = new HeldPool(() => ({ capacity: 1, share: 1 }), 'refuse');
    const first = pool.admit('a');
    if (!first.ok) throw new Error('refused');
    first.place.release();
    first.place.release();
    expect(pool.held()).toBe(0);
    expect(pool.admit('b').ok).toBe(true);
    expect(pool.admit('a')).toEqual({ ok: false, why: 'full' });
  });
});

describe('a pre-empting pool', () => {
  test("an identity at its share gives up its own oldest place, and nobody else's", () => {
    const pool = new HeldPool(() => shareOf(8), 'preempt');
    const ended: string[] = [];
    pool.admit('b', () => ended.push('b1'));
    pool.admit('a', () => ended.push('a1'));
    pool.admit('a', () => ended.push('a2'));
    expect(pool.admit('a', () => ended.push('a3')).ok).toBe(true);
    expect(ended).toEqual(['a1']);
    expect(pool.held('a')).toBe(2);
    expect(pool.held('b')).toBe(1);
  });

  test('a newcomer to a full pool takes the oldest place of its largest holder', () => {
    const pool = new HeldPool(() => ({ capacity: 4, share: 2 }), 'preempt');
    const ended: string[] = [];
    for (const [who, n] of [
      ['a', 1],
      ['b', 1],
      ['a', 2],
      ['b', 2],
    ] as const)
      pool.admit(who, () => ended.push(`${who}${n}`));
    // a and b hold two each; the largest holder found first (a) loses its oldest.
    expect(pool.admit('c').ok).toBe(true);
    expect(ended).toEqual(['a1']);
    expect(pool.held()).toBe(4);
  });

  test('a lowered setting is met at the next admission', () => {
    let limits = { capacity: 10, share: 10 };
    const pool = new HeldPool(() => limits, 'preempt');
    for (let i = 0; i < 10; i++) pool.admit('a');
    limits = { capacity: 4, share: 1 };
    pool.admit('b');
    expect(pool.held('a')).toBe(3);
    pool.admit('a');
    expect(pool.held('a')).toBe(1);
    expect(pool.held()).toBe(2);
  });
});

type Op = { kind: 'admit'; who: 'a' | 'b' } | { kind: 'release'; who: 'a' | 'b'; pick: number };

test('two identities interleaving admissions and releases: neither exceeds its share, a newcomer under its share is never refused', () => {
  const op = fc.oneof(
    fc.record({ kind: fc.constant('admit' as const), who: fc.constantFrom('a' as const, 'b' as const) }),
    fc.record({ kind: fc.constant('release' as const), who: fc.constantFrom('a' as const, 'b' as const), pick: fc.nat() }),
  );
  fc.assert(
    fc.property(
      fc.integer({ min: 2, max: 12 }),
      fc.constantFrom('refuse' as const, 'preempt' as const),
      fc.array(op, { maxLength: 60 }),
      (capacity, policy, ops: Op[]) => {
        const limits = shareOf(capacity, 0.5);
        const pool = new HeldPool(() => limits, policy);
        const places: Record<'a' | 'b', { release(): void }[]> = { a: [], b: [] };
        for (const o of ops) {
          if (o.kind === 'admit') {
            const under = pool.held(o.who) < limits.share;
            const got = pool.admit(o.who);
            // Two identities with half each can never fill the pool against one under its share.
            if (under) expect(got.ok).toBe(true);
            if (policy === 'preempt') expect(got.ok).toBe(true);
            if (got.ok) places[o.who].push(got.place);
          } else {
            const list = places[o.who];
            list.splice(o.pick % Math.max(1, list.length), 1)[0]?.release();
          }
          expect(pool.held('a')).toBeLessThanOrEqual(limits.share);
          expect(pool.held('b')).toBeLessThanOrEqual(limits.share);
          expect(pool.held()).toBeLessThanOrEqual(limits.capacity);
          expect(pool.held()).toBe(pool.held('a') + pool.held('b'));
        }
      },
    ),
  );
});

describe('the share table', () => {
  test('docs/security.md carries the generated table, with the figures the pools compute (npm run security:sync)', () => {
    expect(docBlockCells('security.md', sharesBlock)).toEqual(tableCells(sharesMarkdown()));
    expect(tableCells(sharesMarkdown())).toContainEqual(
      expect.arrayContaining(['`TALLYHO_SCHEDULES_MAX_LIVE` (1,000)', 'a quarter (250)']),
    );
  });
});
