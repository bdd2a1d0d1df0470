/**
 * What the run's costs are kept under: one folder for the run (TEST_COSTS_DIR, made by jest.config.js
 * before the global setup and the workers), where the e2e harness writes each host start
 * (hostStarts.cjs) and each file's set-up its jest worker's CPU (workerCpu.cjs); the timing reporter
 * reads both and removes the folder. A file's costs are keyed by project and path: the e2e files run
 * in two projects (one host each), and by path alone the two runs would be one. CommonJS, as the
 * reporter is.
 */

const { relative, resolve } = require('node:path');

/** The folder's environment variable. */
const costsDirVariable = 'TEST_COSTS_DIR';

/** A file's key in both accounts: its project and its path from the repository's root. */
const fileKey = (project, path) => `${project}\t${path}`;

const repoRoot = resolve(__dirname, '..', '..');

/** A test file's path as the keys hold it (from the repository's root, whatever jest's cwd). */
const repoPath = (absolute) => relative(repoRoot, absolute);

/** The project this test file runs in (jest.config.js's `globals.testProject`); undefined outside one (the main process). */
function testProject() {
  const project = globalThis.testProject;
  return typeof project === 'string' ? project : undefined;
}

/** The key as the report prints it: `path (project)`. */
function shownKey(key) {
  const [project, path] = key.split('\t');
  return path === undefined ? key : `${path} (${project})`;
}

module.exports = { costsDirVariable, fileKey, repoPath, shownKey, testProject };
