/**
 * What each test file cost its jest worker in CPU, by project: every file's set-up
 * (test/support/projects/workerCpu.setup.ts) writes a line `<project>\t<path>\t<ms>` to `workerCpuFile`
 * in the run's costs folder (testCosts.cjs), and the timing reporter adds them up. The per-kind CPU
 * line already says what the workers cost together; this says which projects and files it went to.
 * CommonJS, as the reporter is.
 */
const { existsSync, readFileSync } = require('node:fs');
const { join } = require('node:path');

const { fileKey } = require('./testCosts.cjs');

const workerCpuFile = 'worker-cpu.txt';

/** Seconds by file (keyed by project and path, testCosts.cjs), and by project; empty when the folder or its file is missing. */
function workerCpu(dir) {
  const byFile = new Map();
  const byProject = new Map();
  const file = dir === undefined ? undefined : join(dir, workerCpuFile);
  if (file === undefined || !existsSync(file)) return { byFile, byProject };
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const [project, path, ms] = line.split('\t');
    const seconds = Number(ms) / 1000;
    if (project === undefined || project === '' || path === undefined || path === '' || !Number.isFinite(seconds)) continue;
    const key = fileKey(project, path);
    byFile.set(key, (byFile.get(key) ?? 0) + seconds);
    byProject.set(project, (byProject.get(project) ?? 0) + seconds);
  }
  return { byFile, byProject };
}

/** The report's line: each project's worker CPU, largest first; '' when nothing was counted. */
function workerCpuLine(byProject) {
  const shown = [...byProject].sort((a, b) => b[1] - a[1]).map(([project, seconds]) => `${project} ${seconds.toFixed(0)}`);
  return shown.length === 0 ? '' : `Jest workers' CPU seconds by project (each file from its set-up to its end): ${shown.join(', ')}\n`;
}

module.exports = { workerCpu, workerCpuFile, workerCpuLine };
