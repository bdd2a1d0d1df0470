/**
 * The timing reporter's account of the hosts the e2e harness started (test/support/hostStarts.cjs):
 * counts and seconds by kind, and what the hosts' own processes cost in CPU, from the lines
 * test/e2e/support/harness.ts writes (`kind what project path seconds startedCpu endedCpu`).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { costliestHosts, hostStarts, hostStartsFile } from '../support/hostStarts.cjs';
import { fileKey } from '../support/testCosts.cjs';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'test-costs-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const account = (lines: readonly string[]) => {
  writeFileSync(join(dir, hostStartsFile), `${lines.join('\n')}\n`);
  return hostStarts(dir);
};

test('a life is counted once it ends: by a stop, or replaced by a restart; reaching Running at each start and restart', () => {
  const starts = account([
    'real start e2e-real test/e2e/a.test.ts 6.0 4.00 0.00',
    'real restart e2e-real test/e2e/a.test.ts 5.0 3.50 9.00', // the first life (9 s) ends, the second reaches Running at 3.5 s
    'real stop e2e-real test/e2e/a.test.ts 1.0 0.00 7.50', // the second life: 7.5 s in all
    'devhost start e2e test/e2e/a.test.ts 1.0 0.40 0.00',
    'devhost stop e2e test/e2e/a.test.ts 0.1 0.00 2.00',
    'real start - shared 6.0 4.50 0.00', // the shared host's life ends after the report: left out
  ]);
  expect(starts.cpu).toBe(
    'real 17 s in 2 lives, 8 s of it reaching Running (2 starts and restarts, 3.8 s each); ' +
      'devhost 2 s in 1 lives, 0 s of it reaching Running (1 starts and restarts, 0.4 s each)',
  );
  expect(starts.total).toBe('real 2 (12 s), real restarts 1 (5 s), devhost 1 (1 s); stopping took real stops 1 s, devhost stops 0 s');
  // One file in two projects: each project's run has its own hosts.
  expect(starts.byFile.get(fileKey('e2e-real', 'test/e2e/a.test.ts'))).toEqual({ real: 1, 'real restarts': 1 });
  expect(starts.byFile.get(fileKey('e2e', 'test/e2e/a.test.ts'))).toEqual({ devhost: 1 });
  expect(starts.byFile.get('shared')).toEqual({ real: 1 });
  expect(starts.cpuByFile).toEqual(
    new Map([
      [fileKey('e2e-real', 'test/e2e/a.test.ts'), { real: 16.5 }],
      [fileKey('e2e', 'test/e2e/a.test.ts'), { devhost: 2 }],
    ]),
  );
});

test('the costliest files come first, each with its kinds', () => {
  const starts = account([
    'devhost stop e2e test/e2e/small.test.ts 0.1 0.00 1.00',
    'real stop e2e-real test/e2e/big.test.ts 1.0 0.00 30.00',
    'devhost stop e2e-real test/e2e/big.test.ts 0.1 0.00 3.00',
    'real stop e2e-real test/e2e/middle.test.ts 1.0 0.00 10.00',
    'devhost stop e2e test/e2e/middle.test.ts 0.1 0.00 2.00',
  ]);
  expect(costliestHosts(starts.cpuByFile, 2)).toEqual([
    'test/e2e/big.test.ts (e2e-real) real 30 devhost 3',
    'test/e2e/middle.test.ts (e2e-real) real 10',
  ]);
});

test("CPU that could not be read ('-', or lines of an older harness) counts no life and no start; the counts stay", () => {
  const starts = account([
    'real start e2e-real test/e2e/a.test.ts 6.0 - 0.00',
    'real stop e2e-real test/e2e/a.test.ts 1.0 0.00 -',
    'devhost start e2e x 1.0',
  ]);
  expect(starts.cpu).toBeUndefined();
  expect(starts.total).toBe('real 1 (6 s), devhost 1 (1 s); stopping took real stops 1 s');
});

test('no folder, or no file in it: nothing to say', () => {
  const nothing = { total: undefined, byFile: new Map(), cpuByFile: new Map() };
  expect(hostStarts(dir)).toEqual(nothing);
  expect(hostStarts(join(dir, 'missing'))).toEqual(nothing);
  expect(hostStarts(undefined)).toEqual(nothing);
});
