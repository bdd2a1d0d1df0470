// Type-aware lint for the whole project. Orchestrator and entity files get an extra override that
// keeps them deterministic (they are replayed, so they must compute the same thing every time).
import js from '@eslint/js';
import { builtinModules } from 'node:module';
import globals from 'globals';
import tseslint from 'typescript-eslint';

import noElapsedBudget from './test/support/lint/noElapsedBudget.cjs';

const nodeBuiltins = builtinModules.flatMap((m) => [m, `node:${m}`]);

// zod's docs' own form: the bundler keeps only what `z.…` reads of a namespace import, while the named
// `z` (itself a namespace re-export) kept all of zod in the app bundle, every locale included (440 kB).
// Every block that sets its own no-restricted-syntax repeats it (a later block replaces the rule).
const zodNamespace = {
  selector: "ImportDeclaration[source.value='zod'] > ImportSpecifier[imported.name='z']",
  message: "Use `import * as z from 'zod'` (scripts/build-app.mjs).",
};

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      'test-artifacts/**',
      '.azurite/**',
      '.bicep/**',
      '.deploy/**',
      'infra/**/*.json',
      'clients/typescript/dist/**',
      'clients/typescript/src/generated/**',
    ],
  },
  js.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    extends: [...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
      globals: globals.node,
    },
    rules: {
      eqeqeq: ['error', 'always'],
      'no-console': 'off',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/return-await': ['error', 'in-try-catch'],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/prefer-promise-reject-errors': 'error',
      'no-restricted-syntax': ['error', zodNamespace],
    },
  },
  {
    // shared/ holds the capabilities; it never depends on the Functions runtime. Its functions stay
    // short enough to read at once (comments and blank lines aside).
    files: ['shared/**/*.ts'],
    rules: {
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: '@azure/functions', message: 'shared/ must not depend on the Functions runtime; do that in functions/.' },
            { name: 'durable-functions', allowTypeImports: true, message: 'shared/ may use durable-functions types only.' },
          ],
          patterns: [{ group: ['**/functions/**', '**/devhost/**'], message: 'shared/ depends on nothing above it.' }],
        },
      ],
    },
  },
  {
    // shared/ reads time through the injected Clock (shared/clock.ts), so the virtual clock of the
    // tests and the devhost moves every reading; only the clock itself reads the wall clock.
    files: ['shared/**/*.ts'],
    ignores: ['shared/clock.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'Read the time through the injected Clock (shared/clock.ts).' },
      ],
      'no-restricted-syntax': [
        'error',
        zodNamespace,
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: 'new Date() reads the wall clock; use the injected Clock (shared/clock.ts).',
        },
        {
          selector: "CallExpression[callee.name='Date']",
          message: 'Date() reads the wall clock; use the injected Clock (shared/clock.ts).',
        },
      ],
    },
  },
  {
    // The admin console runs in the browser (bundled by scripts/build-console.mjs); it talks to the app over HTTP only.
    files: ['console/**/*.ts', 'console/**/*.tsx'],
    languageOptions: { globals: globals.browser },
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/shared/**', '**/functions/**', '**/devhost/**'], message: 'The console uses the HTTP API only.' }] },
      ],
    },
  },
  {
    // The TypeScript client is its own package for Node and browsers: it speaks the public HTTP API
    // only and runs wherever fetch does, so no Node built-ins and nothing of the app.
    files: ['clients/typescript/src/**/*.ts'],
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'The client runs in browsers too; use web platform APIs.' })),
          patterns: [{ group: ['**/shared/**', '**/functions/**', '**/devhost/**'], message: 'The client uses the HTTP API only.' }],
        },
      ],
    },
  },
  {
    // The offline host loads any v4 app; it must not know this one.
    files: ['devhost/**/*.ts'],
    ignores: ['devhost/test/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/shared/**', '**/functions/**'], message: 'devhost/ knows nothing of the app.' }] },
      ],
    },
  },
  {
    // Orchestrators and entities are replayed: same input, same decisions, no side effects. The
    // modules whose decisions they delegate to (a writer's append, flush and handoff steps, a gate's
    // transitions, a schedule's state machine and policies) are held to the same rules.
    // .dependency-cruiser.cjs checks the imports of replayed code transitively.
    files: [
      '**/*.orchestrator.ts',
      '**/*.entity.ts',
      'shared/streams/writer*.ts',
      'shared/streams/ledger.ts',
      'shared/gates/transitions.ts',
      'shared/schedules/machine.ts',
      'shared/schedules/policies.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            ...nodeBuiltins.map((name) => ({ name, message: 'No I/O in orchestrator or entity code.' })),
            { name: '@azure/data-tables', message: 'No I/O in orchestrator or entity code; use an activity.' },
            { name: '@azure/storage-blob', message: 'No I/O in orchestrator or entity code; use an activity.' },
            { name: '@azure/storage-queue', message: 'No I/O in orchestrator or entity code; use an activity.' },
            { name: '@azure/service-bus', message: 'No I/O in orchestrator or entity code; use an activity.' },
          ],
          patterns: [
            {
              group: ['**/storage/**', '**/config', '**/clock'],
              message: 'No I/O, config or wall-clock time in orchestrator or entity code.',
            },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        ...['setTimeout', 'setInterval', 'setImmediate', 'queueMicrotask', 'fetch', 'process', 'crypto', 'performance'].map((name) => ({
          name,
          message: `${name} is not deterministic; use context.df (currentUtcDateTime, createTimer, newGuid) or an activity.`,
        })),
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'Use context.df.currentUtcDateTime.' },
        { object: 'Math', property: 'random', message: 'Use context.df.newGuid or pass randomness in as input.' },
        { object: 'process', property: 'env', message: 'Read settings in an activity or pass them as input.' },
      ],
      'no-restricted-syntax': [
        'error',
        zodNamespace,
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: 'new Date() reads the clock; use context.df.currentUtcDateTime.',
        },
        { selector: "CallExpression[callee.name='Date']", message: 'Date() reads the clock; use context.df.currentUtcDateTime.' },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'devhost/test/**/*.ts', 'bench/**/*.ts', 'clients/typescript/test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    // Tests wait on conditions, never on the machine's speed (test/support/waits.ts); bench/ measures.
    files: ['test/**/*.ts', 'devhost/test/**/*.ts', 'clients/typescript/test/**/*.ts'],
    plugins: { tallyho: { rules: { 'no-elapsed-budget': noElapsedBudget } } },
    rules: { 'tallyho/no-elapsed-budget': 'error' },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: { globals: { ...globals.node }, sourceType: 'module' },
  },
  {
    files: ['**/*.cjs', 'jest.config.js'],
    languageOptions: { sourceType: 'commonjs' },
  },
);
