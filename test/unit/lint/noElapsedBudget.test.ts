/**
 * The lint rule that keeps speed out of the tests (test/support/lint/noElapsedBudget.cjs): a clock
 * difference compared with a constant is flagged, by an operator or an expect matcher, also through
 * the variables that hold the readings; clock readings used otherwise are not.
 */
import { RuleTester } from 'eslint';

import rule from '../../support/lint/noElapsedBudget.cjs';

const tester = new RuleTester({ languageOptions: { ecmaVersion: 2022, sourceType: 'module' } });
const flagged = [{ message: /asserts on the machine’s speed/ }];

tester.run('no-elapsed-budget', rule, {
  valid: [
    // Waiting on a condition, with the clock only for a name or a time in the future.
    'const name = `t${Date.now()}`;',
    'const at = new Date(Date.now() + 3600_000).toISOString();',
    // A figure printed, not asserted.
    'const started = Date.now(); work(); console.log(`took ${Date.now() - started} ms`);',
    // A count compared with a constant.
    'expect(items.length).toBeLessThan(100);',
    // A difference of two values the test computed itself (not clock readings).
    'expect(b.at - a.at).toBeGreaterThanOrEqual(900);',
    // A difference compared with another measured value.
    'const s = Date.now(); const e = Date.now() - s; expect(e).toBeLessThan(other);',
    // A time in the future compared with a time the app reported.
    'const later = Date.now() + 60_000; expect(Date.parse(row.at)).toBeLessThan(later);',
  ],
  invalid: [
    { code: 'const started = Date.now(); await go(); expect(Date.now() - started).toBeLessThan(2000);', errors: flagged },
    {
      code: 'const t0 = performance.now(); await go(); const tookMs = performance.now() - t0; expect(tookMs).toBeLessThan(5000);',
      errors: flagged,
    },
    { code: 'const s = Date.now(); const elapsed = Date.now() - s; expect(elapsed).not.toBeGreaterThan(60 * 1000);', errors: flagged },
    { code: 'const limit = 15_000; const s = Date.now(); while (Date.now() - s < limit) await tick();', errors: flagged },
    { code: 'const s = performance.now(); if (5000 <= performance.now() - s) throw new Error("slow");', errors: flagged },
    { code: 'const deadline = Date.now() + 20_000; while (Date.now() < deadline && !done()) await tick();', errors: flagged },
    { code: 'const deadline = 30 * 1000 + performance.now(); if (performance.now() > deadline) throw new Error("late");', errors: flagged },
  ],
});
