import { applyChange, emptyTotal, opRingSize, parseTotal, type Total, totalEntity, writeOutcome } from '../../../shared/counters/total';
import { isAppError } from '../../../shared/errors';

describe('counter total rows', () => {
  it('adds, bumps the version and remembers the last writes only', () => {
    let total: Total = emptyTotal;
    for (let i = 1; i <= opRingSize + 5; i++) total = applyChange(total, { delta: i, opId: `op${i}` });
    expect(total.count).toBe(((opRingSize + 5) * (opRingSize + 6)) / 2);
    expect(total.version).toBe(opRingSize + 5);
    expect(total.ops).toHaveLength(opRingSize);
    expect(total.ops[0]).toBe('op6');
    expect(total.ops.at(-1)).toBe(`op${opRingSize + 5}`);
  });

  it('never moves the watermark or the rollup cutoff backwards', () => {
    const a = applyChange(emptyTotal, { delta: 1, opId: 'a', watermark: '0000000000200-x', rolledTo: 200 });
    const b = applyChange(a, { delta: 1, opId: 'b', watermark: '0000000000100-x', rolledTo: 100 });
    expect(b.watermark).toBe('0000000000200-x');
    expect(b.rolledTo).toBe(200);
  });

  it('refuses to leave the exactly representable range', () => {
    const big = applyChange(emptyTotal, { delta: Number.MAX_SAFE_INTEGER, opId: 'a' });
    expect(() => applyChange(big, { delta: 1, opId: 'b' })).toThrow(/representable/);
  });

  it('tells whether a write whose response was lost landed, and admits when it cannot know', () => {
    let total: Total = emptyTotal;
    for (let i = 1; i <= 10; i++) total = applyChange(total, { delta: 1, opId: `op${i}` });
    // op4 was written on version 3.
    expect(writeOutcome(total, 'op4', 3)).toBe('applied');
    // "mine" tried on version 3; version 4 is op4, still remembered: it did not land.
    expect(writeOutcome(total, 'mine', 3)).toBe('notApplied');
    expect(writeOutcome(total, 'mine', 10)).toBe('notApplied');
    for (let i = 11; i <= 60; i++) total = applyChange(total, { delta: 1, opId: `op${i}` });
    // Version 4 has left the ring: absence proves nothing any more.
    expect(writeOutcome(total, 'mine', 3)).toBe('unknown');
    expect(writeOutcome(total, 'mine', 59)).toBe('notApplied');
  });

  it('round-trips through its table entity and reports a corrupt row by partition', () => {
    const total = applyChange(emptyTotal, { delta: 42, opId: 'x y'.replace(' ', '-'), watermark: 'w', rolledTo: 5, sweptAt: 6 });
    const entity = totalEntity('c|00', '~sum', total);
    const back = parseTotal('c|00', { ...entity, etag: 'e1' });
    expect(back).toEqual({ ...total, etag: 'e1' });
    try {
      parseTotal('c|00', { etag: 'e', c: 'lots', v: 1n });
      throw new Error('expected CorruptState');
    } catch (err) {
      expect(isAppError(err) && err.code).toBe('CorruptState');
      expect(isAppError(err) && err.extra.partition).toBe('c|00');
    }
  });
});
