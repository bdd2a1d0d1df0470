/**
 * Counters across instances (docs/counters.md): every acknowledged increment is counted exactly
 * once. The stored value (hit rows plus partition totals, read from `counterdata`) must lie between
 * the acknowledged sum and that sum plus the increments whose answer never came (each may or may
 * not have been stored). Keyed increments are retried with their key until acknowledged, so they
 * count exactly; unkeyed ones (by 1, group-committed) are sent once.
 */
import { capped, type CheckReport, invariant } from '../workload';

export interface CounterFacts {
  readonly name: string;
  /** Hit rows plus totals, as stored once every instance stopped. */
  readonly storedValue: number;
  /** The app's own `?consistent=true` read after the drain (undefined when it did not answer). */
  readonly readValue: number | undefined;
  /** Acknowledged increments (keyed ones once per key). */
  readonly acknowledged: readonly number[];
  /** Increments whose outcome is unknown. */
  readonly unknown: readonly number[];
}

function checkCounter(facts: CounterFacts): { violations: string[]; figures: Record<string, number> } {
  const acked = facts.acknowledged.reduce((a, b) => a + b, 0);
  const lo = acked + facts.unknown.filter((b) => b < 0).reduce((a, b) => a + b, 0);
  const hi = acked + facts.unknown.filter((b) => b > 0).reduce((a, b) => a + b, 0);
  const violations: string[] = [];
  if (facts.storedValue < lo || facts.storedValue > hi)
    violations.push(
      `${facts.name}: stored value ${facts.storedValue}, but the acknowledged increments sum to ${acked}` +
        (lo === hi ? '' : ` (with the unanswered ones, between ${lo} and ${hi})`),
    );
  if (facts.readValue !== undefined && facts.readValue !== facts.storedValue)
    violations.push(`${facts.name}: the app's consistent read said ${facts.readValue}, storage holds ${facts.storedValue}`);
  return {
    violations,
    figures: {
      [`${facts.name} acknowledged`]: facts.acknowledged.length,
      [`${facts.name} unanswered`]: facts.unknown.length,
      [`${facts.name} value`]: facts.storedValue,
    },
  };
}

export function checkCounters(all: readonly CounterFacts[]): CheckReport {
  const results = all.map(checkCounter);
  return {
    capability: 'counters',
    invariants: [
      invariant(
        'every acknowledged increment counted exactly once',
        capped(results.flatMap((r) => r.violations)),
        Object.assign({}, ...results.map((r) => r.figures)) as Record<string, number>,
      ),
    ],
  };
}
