/**
 * The import rules `npm run lint` enforces (dependency-cruiser), with type-only imports counted
 * (tsPreCompilationDeps), since a type import still couples two files:
 *
 * - no import cycle between files;
 * - the layers: shared/ never imports functions/, devhost/ or the Functions runtime; devhost/ never
 *   imports the app; functions/ never imports devhost/; the console and the TypeScript client speak HTTP only;
 * - the edges between shared/'s folders, listed once in `edges` below (docs/architecture.md draws them);
 * - determinism, transitively: orchestrator and entity code is replayed, so nothing it imports, at any
 *   depth, may reach I/O (the storage and Service Bus SDKs, Node built-ins, shared/storage) or the app's
 *   configuration or wall clock (shared/config.ts, shared/clock.ts). eslint keeps the direct rules too.
 */
const { builtinModules } = require('node:module');

/**
 * Which folder of shared/ may import which other folder (its own files and shared/'s root modules
 * aside). The root modules (errors, log, clock, config, settings, retry, resources, …) may import
 * only shared/storage. shared/app, the composition root, may import anything; nothing imports it
 * but functions/ (and tests, tools and benchmarks).
 */
const edges = {
  // Infrastructure: what every capability builds on.
  storage: ['telemetry'],
  durable: [],
  // The port every capability records its metrics and spans through (the composition root builds it).
  telemetry: [],
  // What every service shares (clock, random, logger, telemetry, back-off, ids): the capabilities' deps extend it.
  runtime: ['telemetry'],
  messaging: ['storage'],
  signing: ['storage'],
  // Who is calling: the identity checks (credentials' key is a signing-key setting).
  identity: ['signing'],
  http: ['durable', 'identity', 'telemetry'],
  openapi: ['http'],
  // The effects a capability can make happen when something fires (gate runs, schedules).
  effects: ['storage', 'telemetry'],
  // The capabilities.
  sequences: ['http', 'runtime', 'storage', 'telemetry'],
  counters: ['http', 'storage', 'telemetry'],
  streams: ['durable', 'http', 'openapi', 'runtime', 'storage', 'telemetry'],
  // Job envelopes and lease ids are signed.
  // A processor's hand-on runs on the Durable client of its own trigger (billing appends to a stream).
  jobs: ['durable', 'http', 'signing', 'storage', 'telemetry'],
  // In-app processors (registered in shared/app/processors.ts): billing appends its ledger through streams.
  billing: ['durable', 'http', 'jobs', 'streams'],
  wordcount: ['jobs'],
  // A gate run's job action and a schedule's job target take the jobs API's own body.
  gates: ['durable', 'effects', 'http', 'jobs', 'runtime', 'storage', 'telemetry'],
  schedules: ['durable', 'effects', 'http', 'jobs', 'runtime', 'storage', 'telemetry'],
  // Named callers' credentials (issued with the identity rules, checked on use by the resolver).
  callers: ['http', 'identity', 'runtime', 'storage'],
  health: ['http', 'storage'],
  console: ['http'],
  apidocs: ['console', 'http'],
};

/**
 * The capabilities: each has a front door, its `index.ts` (`createX(deps)` and what others use of it),
 * and another folder of shared/ reaches it only through that — or its API body schemas (a gate run's
 * job action and a schedule's job target take the jobs API's own body), or its settings declarations
 * (shared/app/settings.ts reads every group without loading the capabilities).
 */
const capabilities = ['callers', 'sequences', 'counters', 'gates', 'schedules', 'jobs', 'streams', 'billing', 'wordcount'];

const frontDoorRules = capabilities.map((capability) => ({
  name: `front-door-of-${capability}`,
  comment: `Another folder of shared/ imports shared/${capability}/ only through its index.ts (or its API body schemas, or its settings declarations).`,
  severity: 'error',
  from: { path: '^shared/[^/]+/', pathNot: `^shared/${capability}/` },
  to: {
    path: `^shared/${capability}/`,
    pathNot: [`^shared/${capability}/index\\.ts$`, `^shared/${capability}/[\\w/]*schemas\\.ts$`, `^shared/${capability}/settings\\.ts$`],
  },
}));

const folderRules = Object.entries(edges).map(([folder, allowed]) => ({
  name: `edge-from-${folder}`,
  comment: `shared/${folder}/ may import only ${allowed.length === 0 ? 'shared/ root modules' : allowed.map((a) => `shared/${a}/`).join(', ')} (.dependency-cruiser.cjs edges)`,
  severity: 'error',
  from: { path: `^shared/${folder}/` },
  to: { path: '^shared/[^/]+/', pathNot: [`^shared/(${[folder, ...allowed].join('|')})/`] },
}));

const builtins = builtinModules.filter((m) => !m.startsWith('_')).map((m) => m.replace(/[/.]/g, '\\$&'));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'An import cycle between files, type-only imports included.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'shared-is-below-functions',
      comment: 'shared/ holds the app; it depends on nothing above it and not on the Functions runtime.',
      severity: 'error',
      from: { path: '^shared/' },
      to: { path: ['^functions/', '^devhost/', '^node_modules/@azure/functions/'] },
    },
    {
      name: 'shared-uses-durable-functions-types-only',
      comment: 'shared/ may name durable-functions types (orchestration contexts); the client is functions/ business.',
      severity: 'error',
      from: { path: '^shared/' },
      to: { path: '^node_modules/durable-functions/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'devhost-knows-nothing-of-the-app',
      comment: 'devhost/ loads any v4 app; it must not know this one.',
      severity: 'error',
      from: { path: '^devhost/', pathNot: '^devhost/test/' },
      to: { path: ['^shared/', '^functions/'] },
    },
    {
      name: 'docgen-is-not-deployed',
      comment: 'docgen/ writes docs and lists from the declarations; the deployment package leaves it out, so the app never imports it.',
      severity: 'error',
      from: { path: ['^shared/', '^functions/'] },
      to: { path: '^docgen/' },
    },
    {
      name: 'functions-does-not-use-devhost',
      severity: 'error',
      from: { path: '^functions/' },
      to: { path: '^devhost/' },
    },
    {
      name: 'clients-speak-http-only',
      comment: 'The console and the TypeScript client use the public HTTP API only.',
      severity: 'error',
      from: { path: ['^console/', '^clients/typescript/src/'] },
      to: { path: ['^shared/', '^functions/', '^devhost/'] },
    },
    {
      name: 'root-modules-import-only-storage',
      comment: "shared/'s root modules (errors, config, settings, retry, …) sit below every folder but storage.",
      severity: 'error',
      from: { path: '^shared/[^/]+\\.ts$' },
      to: { path: '^shared/[^/]+/', pathNot: '^shared/storage/' },
    },
    {
      name: 'only-functions-imports-the-app',
      comment: 'shared/app is the composition root: capabilities get what they need through its wiring, never by importing it.',
      severity: 'error',
      from: { path: '^shared/', pathNot: '^shared/app/' },
      to: { path: '^shared/app/' },
    },
    {
      name: 'the-app-uses-front-doors',
      comment:
        'shared/app, the composition root, builds each capability through its front door and wires them through ports: it imports a folder of shared/ only through its index.ts, or its declarations (settings.ts, connection.ts: shared/app/settings.ts).',
      severity: 'error',
      from: { path: '^shared/app/' },
      to: { path: '^shared/[^/]+/', pathNot: ['^shared/app/', '^shared/[^/]+/index\\.ts$', '^shared/[^/]+/(settings|connection)\\.ts$'] },
    },
    ...frontDoorRules,
    ...folderRules,
    {
      name: 'replayed-code-reaches-no-io',
      comment:
        'Orchestrators and entities are replayed: nothing they import, at any depth, may reach I/O, the configuration or the wall clock.',
      severity: 'error',
      from: { path: '\\.(orchestrator|entity)\\.ts$' },
      to: {
        reachable: true,
        path: [
          '^node_modules/@azure/(storage-blob|storage-queue|data-tables|service-bus|identity)/',
          `^(node:)?(${builtins.join('|')})$`,
          '^shared/storage/',
          '^shared/config\\.ts$',
          '^shared/clock\\.ts$',
        ],
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Built output (the app's dist/, the client package's) is not source, and may be being written.
    exclude: { path: ['(^|/)dist/', '^coverage/'] },
  },
};
