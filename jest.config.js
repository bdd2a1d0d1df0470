/**
 * One jest run, four projects. The global setup starts Azurite (in memory, free ports) once for the
 * whole run; e2e files each start their own devhost against it (or use E2E_BASE_URL).
 */
const base = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json' }] },
  moduleFileExtensions: ['ts', 'js', 'json'],
  rootDir: __dirname,
  // The deployment package test unpacks the app into .deploy/: not a second copy of the modules.
  modulePathIgnorePatterns: ['<rootDir>/.deploy/'],
};

const client = {
  ...base,
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/clients/typescript/tsconfig.json' }] },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
};

/** @type {import('jest').Config} */
module.exports = {
  globalSetup: '<rootDir>/test/support/globalSetup.ts',
  globalTeardown: '<rootDir>/test/support/globalTeardown.ts',
  maxWorkers: 2,
  testTimeout: 60_000,
  projects: [
    { ...base, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    {
      ...base,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts', '<rootDir>/test/fault/**/*.test.ts'],
    },
    { ...base, displayName: 'devhost', testMatch: ['<rootDir>/devhost/test/**/*.test.ts'] },
    { ...base, displayName: 'e2e', testMatch: ['<rootDir>/test/e2e/**/*.test.ts'] },
    // The TypeScript client is its own package (ESM, `.js` import suffixes); jest runs its sources
    // as CommonJS through the package's tsconfig, with the suffixes mapped back to the .ts files.
    { ...client, displayName: 'client', testMatch: ['<rootDir>/clients/typescript/test/unit/**/*.test.ts'] },
    { ...client, displayName: 'client-e2e', testMatch: ['<rootDir>/clients/typescript/test/e2e/**/*.test.ts'] },
  ],
};
