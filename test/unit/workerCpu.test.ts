/**
 * The timing reporter's account of what each test file cost its jest worker (test/support/workerCpu.cjs),
 * from the lines every file's set-up writes (test/support/projects/workerCpu.setup.ts), and that set-up
 * itself: this file's own line is not written yet (the set-up's afterAll comes after its tests), but the
 * project it will be counted under is the one jest.config.js gave it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { workerCpu, workerCpuFile, workerCpuLine } from '../support/workerCpu.cjs';
import { repoPath, testProject } from '../support/testCosts.cjs';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'worker-cpu-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test('a file run by two projects is counted once in each; the projects are summed and shown largest first', () => {
  writeFileSync(
    join(dir, workerCpuFile),
    [
      'e2e\ttest/e2e/gates.test.ts\t2500',
      'e2e-real\ttest/e2e/gates.test.ts\t9500',
      'e2e\ttest/e2e/jobs.test.ts\t1000',
      'unit\ttest/unit/a.test.ts\t400',
      '',
    ].join('\n'),
  );
  const cpu = workerCpu(dir);
  expect(cpu.byFile.get('e2e\ttest/e2e/gates.test.ts')).toBe(2.5);
  expect(cpu.byFile.get('e2e-real\ttest/e2e/gates.test.ts')).toBe(9.5);
  expect([...cpu.byProject]).toEqual([
    ['e2e', 3.5],
    ['e2e-real', 9.5],
    ['unit', 0.4],
  ]);
  expect(workerCpuLine(cpu.byProject)).toBe(
    "Jest workers' CPU seconds by project (each file from its set-up to its end): e2e-real 10, e2e 4, unit 0\n",
  );
});

test('a line cut short or without a number is left out; no folder or no file means nothing counted and no line', () => {
  writeFileSync(
    join(dir, workerCpuFile),
    [
      'unit\ttest/unit/a.test.ts\t300',
      'unit\ttest/unit/b.test.ts',
      '\ttest/unit/c.test.ts\t5',
      'unit\t\t5',
      'unit\ttest/unit/d.test.ts\tx',
    ].join('\n'),
  );
  expect([...workerCpu(dir).byFile]).toEqual([['unit\ttest/unit/a.test.ts', 0.3]]);
  expect(workerCpu(undefined).byProject.size).toBe(0);
  expect(workerCpu(join(dir, 'missing')).byFile.size).toBe(0);
  expect(workerCpuLine(new Map())).toBe('');
});

test('jest.config.js names the project to the set-up and the harness that write the lines', () => {
  expect(testProject()).toBe('unit');
});

test("a file's path in the keys is from the repository's root, whatever jest's cwd", () => {
  expect(repoPath(__filename)).toBe('test/unit/workerCpu.test.ts');
});
