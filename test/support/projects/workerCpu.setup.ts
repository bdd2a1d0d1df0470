// Every project: the file's CPU in its jest worker, from here (before the file's own imports) to its
// root afterAll hooks (this one runs first of them), for the timing reporter (test/support/workerCpu.cjs).
// Each project names itself in `globals.testProject` (jest.config.js).
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';

import { costsDirVariable, repoPath, testProject } from '../testCosts.cjs';
import { workerCpuFile } from '../workerCpu.cjs';

const started = process.cpuUsage();
const dir = process.env[costsDirVariable];
const project = testProject();

afterAll(() => {
  const path = expect.getState().testPath;
  if (dir === undefined || project === undefined || path === undefined) return;
  const used = process.cpuUsage(started);
  appendFileSync(join(dir, workerCpuFile), `${project}\t${repoPath(path)}\t${Math.round((used.user + used.system) / 1000)}\n`);
});
