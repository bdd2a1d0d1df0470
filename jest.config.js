/**
 * One jest run, several projects. The projects that use storage share one Azurite (in memory, free
 * ports), started by their global setup only when one of them takes part (the unit and client projects
 * need none); e2e files each start their own host against it (or use E2E_BASE_URL). The e2e files run
 * on the devhost, and a second time on the real Functions host when one is available (an optional
 * tool: required under CI=true, announced as skipped elsewhere; test/support/realHostTool.cjs).
 */
const { mkdtempSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

const { optionalTool } = require('./test/support/optionalTool.cjs');
const { realHostTool } = require('./test/support/realHostTool.cjs');
const { costsDirVariable } = require('./test/support/testCosts.cjs');

const realHostProjectNames = ['e2e-real', 'parity', 'client-e2e-real'];

/** The projects named on the command line (`--selectProjects a b`, `--selectProjects=a`), or undefined for all. */
function selectedProjects(argv = process.argv) {
  const at = argv.findIndex((a) => a === '--selectProjects' || a.startsWith('--selectProjects='));
  if (at < 0) return undefined;
  const inline = argv[at].split('=')[1];
  if (inline !== undefined) return inline.split(',');
  const names = [];
  for (const a of argv.slice(at + 1)) {
    if (a.startsWith('-')) break;
    names.push(a);
  }
  return names;
}

// The real host is looked for (and, when missing, announced or under CI=true required) only when a run
// may include its projects: `npm run test:fast` (unit and client) neither needs nor mentions it.
const selected = selectedProjects();
const realHost =
  (selected === undefined || selected.some((name) => realHostProjectNames.includes(name))) && optionalTool(realHostTool) !== undefined;

// Jest only strips the types (swc, file by file): `npm test` has type-checked everything once already
// (typecheck), so a second, per-worker TypeScript compile would only cost time (about 21 s of CPU per
// 100 files on a fresh clone, measured against ts-jest). The sources are written for it:
// isolatedModules is on in every tsconfig. Inline source maps keep stack traces on the .ts lines.
const swc = { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' }, sourceMaps: 'inline' };
const base = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['@swc/jest', swc] },
  moduleFileExtensions: ['ts', 'js', 'json'],
  rootDir: __dirname,
  // The deployment package test unpacks the app into .deploy/: not a second copy of the modules.
  modulePathIgnorePatterns: ['<rootDir>/.deploy/'],
  // A wait still open when its test ends is given up with a report of what it waited for (test/support/waits.ts);
  // the file's CPU in its worker goes to the timing report (test/support/workerCpu.cjs).
  setupFilesAfterEnv: ['<rootDir>/test/support/projects/waits.setup.ts', '<rootDir>/test/support/projects/workerCpu.setup.ts'],
};

// The projects whose tests run in the test's own process: their safety net is a minute (jest reads
// testTimeout from the run's config only, so a set-up file sets it for them).
const pure = { setupFilesAfterEnv: [...base.setupFilesAfterEnv, '<rootDir>/test/support/projects/pure.setup.ts'] };

// The projects that use storage: their global setup starts the run's Azurite (once, whichever of
// them take part; jest runs a module named by several projects once). The e2e projects' also starts
// the devhost their files share (test/e2e/support/sharedHost.ts); one teardown stops both.
const storage = {
  globalSetup: '<rootDir>/test/support/globalSetup.ts',
  globalTeardown: '<rootDir>/test/support/globalTeardown.ts',
};
const e2eStorage = { ...storage, globalSetup: '<rootDir>/test/support/e2eSetup.ts' };

const client = {
  ...base,
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
};

const e2eOn = {
  devhost: '<rootDir>/test/support/projects/e2eDevhost.setup.ts',
  real: '<rootDir>/test/support/projects/e2eReal.setup.ts',
};

// The same e2e files on the real host. Its set-up (a copy of the host build, the app's extensions
// built from extensions.csproj) runs only when one of these projects takes part in the run.
const onRealHost = {
  setupFiles: [e2eOn.real],
  globalSetup: '<rootDir>/test/support/realHostSetup.ts',
  globalTeardown: '<rootDir>/test/support/realHostTeardown.ts',
};
const realHostProjects = [
  {
    ...base,
    ...onRealHost,
    displayName: 'e2e-real',
    testMatch: ['<rootDir>/test/e2e/**/*.test.ts'],
    // The packed clients' install and page run test the packages, not the host (minutes of npm and
    // dotnet pack); the client on the real host is client-e2e-real's work.
    testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/e2e/clientPackages\\.[a-z]+\\.test\\.ts$'],
  },
  // The same calls to both hosts, answers compared (needs the real host, so only here).
  { ...base, ...onRealHost, displayName: 'parity', testMatch: ['<rootDir>/test/parity/**/*.test.ts'] },
  { ...client, ...onRealHost, displayName: 'client-e2e-real', testMatch: ['<rootDir>/clients/typescript/test/e2e/**/*.test.ts'] },
];

// The run's costs folder (test/support/testCosts.cjs), made before the global setup (which readies the
// shared hosts this process starts) and before the workers are forked: every host the harness starts
// and every file's worker CPU is a line there; the timing reporter adds them up and removes it.
if (process.env[costsDirVariable] === undefined) process.env[costsDirVariable] = mkdtempSync(join(tmpdir(), 'tallyho-test-costs-'));

/** @type {import('jest').Config} */
module.exports = {
  // Three workers on a 2-core machine: many e2e files spend part of their time waiting (a lease to run
  // out, a host to restart, a browser's page), and a third file fills that time. Measured on the 2-core
  // CI machine, `npm test` without the real host, fresh clone: 6 min 50 s with two, 6 min 13 s with three.
  maxWorkers: 3,
  // The files that use a built artifact run last: npm test builds the artifacts beside jest
  // (test/support/testSequencer.cjs).
  testSequencer: '<rootDir>/test/support/testSequencer.cjs',
  // Where the time goes: the slowest files and each project's total, after the summary.
  reporters: [
    'default',
    ['<rootDir>/test/support/timingReporter.cjs', { slowest: 10, perFile: ['e2e-real', 'client-e2e-real', 'parity'] }],
  ],
  // Jest's timeout is a safety net, not a budget: every wait in the tests is on a condition (a log
  // line, a state, a count; test/support/waits.ts), so a busy machine makes a test slower, never red.
  // The net is wide (the slowest tests of the projects that start processes take about a minute on a
  // quiet 2-core machine), and the pure projects keep a tighter one (see `pure`).
  testTimeout: 300_000,
  projects: [
    // Pure: no process, no Azurite, no network.
    { ...base, ...pure, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    // Tests that run a tool: the Bicep CLI, shellcheck, the OpenAPI validator's CLI.
    { ...base, displayName: 'tools', testMatch: ['<rootDir>/test/tools/**/*.test.ts'] },
    {
      ...base,
      ...storage,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts', '<rootDir>/test/fault/**/*.test.ts'],
    },
    { ...base, ...storage, displayName: 'devhost', testMatch: ['<rootDir>/devhost/test/**/*.test.ts'] },
    { ...base, ...e2eStorage, displayName: 'e2e', testMatch: ['<rootDir>/test/e2e/**/*.test.ts'], setupFiles: [e2eOn.devhost] },
    // The TypeScript client is its own package (ESM, `.js` import suffixes); jest runs its sources
    // as CommonJS like the rest (swc strips the types), with the suffixes mapped back to the .ts files.
    { ...client, ...pure, displayName: 'client', testMatch: ['<rootDir>/clients/typescript/test/unit/**/*.test.ts'] },
    {
      ...client,
      ...e2eStorage,
      displayName: 'client-e2e',
      testMatch: ['<rootDir>/clients/typescript/test/e2e/**/*.test.ts'],
      setupFiles: [e2eOn.devhost],
    },
    ...(realHost ? realHostProjects : []),
    // The scale-out run (#38): its checkers, the bounded run on the devhost, and on the real host when
    // one is available (the test file asks the optional tool itself and starts its own hosts and Azurite).
    { ...base, displayName: 'scaleout', testMatch: ['<rootDir>/test/scaleout/**/*.test.ts'] },
    // Each project names itself to its files' set-up (test/support/projects/workerCpu.setup.ts).
  ].map((project) => ({ ...project, globals: { ...project.globals, testProject: project.displayName } })),
};
