/**
 * The rule of which deliveries of a declared processor's message count as attempts
 * (shared/jobs/delivery/itemAttempts.ts): those a worker used; unused ones only past the cap, so a
 * batch that ends every worker before its first heartbeat still runs out of attempts.
 */
import { countedBefore, maxUnusedDeliveries } from '../../../shared/jobs/delivery/itemAttempts';

describe('deliveries counted as attempts', () => {
  it('counts none before the first delivery, and every earlier delivery a worker used', () => {
    expect(countedBefore(1, 0)).toBe(0);
    expect(countedBefore(2, 1)).toBe(1);
    expect(countedBefore(4, 3)).toBe(3);
  });

  it('does not count deliveries no worker used, up to the cap, and counts each one past it', () => {
    expect(countedBefore(2, 0)).toBe(0);
    expect(countedBefore(4, 1)).toBe(1);
    expect(countedBefore(maxUnusedDeliveries + 1, 0)).toBe(0);
    expect(countedBefore(maxUnusedDeliveries + 2, 0)).toBe(1);
    expect(countedBefore(maxUnusedDeliveries + 4, 1)).toBe(3);
  });

  it('never counts more deliveries than came before, whatever the record says', () => {
    expect(countedBefore(2, 5)).toBe(1);
    expect(countedBefore(0, 0)).toBe(0);
  });
});
