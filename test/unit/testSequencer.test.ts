/**
 * The suite's order on a fresh clone (test/support/testSequencer.cjs), where jest has no durations yet
 * and orders by file size: the scale-out run first (a small file that runs for minutes), the files
 * that use a built artifact last, the rest largest first.
 */
import { join } from 'node:path';

import Sequencer from '../support/testSequencer.cjs';

const repoRoot = join(__dirname, '..', '..');

/** A test as jest's sequencer sees it, with no cached duration (a cache folder that does not exist). */
const file = (path: string, size: number) => ({
  path: join(repoRoot, path),
  context: {
    config: { cacheDirectory: join(repoRoot, 'node_modules', '.cache', 'no-such-jest-cache'), id: 'order', name: 'order' },
    hasteFS: { getSize: () => size },
  },
});

test('the scale-out run first, the artifacts last, the rest largest first', () => {
  const sequencer = new Sequencer({ contexts: [] });
  const order = sequencer
    .sort([
      file('test/e2e/package.test.ts', 9_000),
      file('test/unit/billing/billing.test.ts', 12_000),
      file('test/scaleout/scaleout.test.ts', 2_900),
      file('test/e2e/gates.test.ts', 35_000),
    ])
    .map((test) => test.path.slice(repoRoot.length + 1));
  expect(order).toEqual([
    'test/scaleout/scaleout.test.ts',
    'test/e2e/gates.test.ts',
    'test/unit/billing/billing.test.ts',
    'test/e2e/package.test.ts',
  ]);
});
