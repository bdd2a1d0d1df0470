import { applyReport, emptyLedger, findReceipt, receiptCapacity, snapshotOf } from '../../../shared/streams/ledger';
import { initialWriterState } from '../../../shared/streams/writerState';

describe('ledger', () => {
  const snapshot = snapshotOf(initialWriterState());

  it('keeps the newest receipts up to its capacity', () => {
    let ledger = emptyLedger();
    for (let i = 0; i < receiptCapacity + 10; i++) {
      ledger = applyReport(ledger, { snapshot: { ...snapshot, rev: i }, receipts: [{ r: `r${i}`, ok: false, why: 'full' }] });
    }
    expect(ledger.receipts).toHaveLength(receiptCapacity);
    expect(findReceipt(ledger, 'r9')).toBeUndefined();
    expect(findReceipt(ledger, `r${receiptCapacity + 9}`)).toEqual({ r: `r${receiptCapacity + 9}`, ok: false, why: 'full' });
  });

  it('never goes back to an older snapshot', () => {
    const newer = applyReport(emptyLedger(), { snapshot: { ...snapshot, rev: 5, accepted: 50 } });
    const late = applyReport(newer, {
      snapshot: { ...snapshot, rev: 4, accepted: 40 },
      receipts: [{ r: 'x', ok: false, why: 'notOwner' }],
    });
    expect(late.snapshot?.accepted).toBe(50);
    // The older snapshot is dropped, but the receipts it came with are kept.
    expect(findReceipt(late, 'x')).toEqual({ r: 'x', ok: false, why: 'notOwner' });
  });
});
