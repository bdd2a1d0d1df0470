// Every project: the file's CPU in its jest worker, from here (before the file's own imports) to its
// root afterAll hooks (this one runs first of them), for the timing reporter (test/support/workerCpu.cjs).
// Each project names itself in `globals.testProject` (jest.config.js).
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';

import { costsDirVariable } from '../testCosts.cjs';
import { workerCpuFile } from '../workerCpu.cjs';

const started = process.cpuUsage();
const dir = process.env[costsDirVariable];
const project: unknown = (globalThis as { testProject?: unknown }).testProject;

afterAll(() => {
  const path = expect.getState().testPath;
  if (dir === undefined || typeof project !== 'string' || path === undefined) return;
  const used = process.cpuUsage(started);
  appendFileSync(
    join(dir, workerCpuFile),
    `${project}\t${path.replace(`${process.cwd()}/`, '')}\t${Math.round((used.user + used.system) / 1000)}\n`,
  );
});
