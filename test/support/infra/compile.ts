/**
 * Compiles, lints and evaluates infra/ with a real Bicep CLI, once per run: the result is cached in
 * test-artifacts/bicep/ under a hash of the CLI, the scenarios and every file in infra/, so each test
 * file reuses it instead of spending seconds per CLI run on a shared machine.
 *
 * What a deployment would create is read from `bicep snapshot`: the CLI evaluates the compiled
 * template with a parameters file (the deployment engine's own expansion of loops, conditions,
 * variables and module parameters) and lists the predicted resources, leaving only what exists at
 * deploy time (`reference(...)`) as ARM expressions. Each scenario below is one such parameters file.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';

import { type BicepCli, diagnosticsOf, runBicep } from './bicepCli';

/**
 * Linter rules that are off by default (Bicep docs, "default level: off", and the rules added since).
 * The strict lint turns on, as warnings, each one the project's bicepconfig.json does not mention;
 * a rule the config sets to "off" stays off, and the config's $comment says why.
 */
const defaultOffRules = [
  'explicit-values-for-loc-params',
  'no-hardcoded-location',
  'no-loc-expr-outside-params',
  'no-module-name',
  'use-description-outputs',
  'use-description-vars',
  'use-recent-api-versions',
  'use-resource-id-functions',
  'use-user-defined-types',
  'what-if-short-circuiting',
] as const;

/** Values for main.bicepparam's readEnvironmentVariable calls (azd exports the same names). */
export const sampleParamEnv: Readonly<Record<string, string>> = { AZURE_ENV_NAME: 'demo', AZURE_LOCATION: 'swedencentral' };

/** The ids a snapshot is evaluated with (the subscription and tenant a deployment would run in). */
export const sampleIds = {
  subscription: '00000000-0000-4000-8000-000000000001',
  tenant: '00000000-0000-4000-8000-000000000002',
  developer: '00000000-0000-4000-8000-0000000000de',
  entraClientId: '00000000-0000-4000-8000-0000000000c1',
  entraTenant: '00000000-0000-4000-8000-0000000000e7',
  actionGroup: '/subscriptions/00000000-0000-4000-8000-000000000001/resourceGroups/rg-ops/providers/Microsoft.Insights/actionGroups/ag-ops',
} as const;

type Literal = string | number | boolean | readonly string[];

interface Scenario {
  /** Environment variables main.bicepparam reads (as `azd env set` would set them). */
  readonly env: Readonly<Record<string, string>>;
  /** Parameters main.bicepparam does not set, appended to a copy of it. */
  readonly params: Readonly<Record<string, Literal>>;
}

/** The deployments the policy tests look at: each is main.bicepparam with some options set. */
export const scenarios = {
  /** As `azd provision` deploys it with nothing set: every option at its default (keys mode). */
  defaults: { env: {}, params: {} },
  /** Every option on: a developer's data roles, an action group for the alerts, keys and Entra ID. */
  everything: {
    env: {
      AZURE_PRINCIPAL_ID: sampleIds.developer,
      TALLYHO_ALERT_ACTION_GROUP_ID: sampleIds.actionGroup,
      TALLYHO_AUTH_MODE: 'keys+entra',
      TALLYHO_ENTRA_CLIENT_ID: sampleIds.entraClientId,
    },
    params: {},
  },
  /** Entra ID only, with the registration in another tenant than the deployment's. */
  entra: {
    env: { TALLYHO_AUTH_MODE: 'entra', TALLYHO_ENTRA_CLIENT_ID: sampleIds.entraClientId },
    params: { entraTenantId: sampleIds.entraTenant },
  },
  /** Every optional part off. */
  bare: { env: {}, params: { alertsEnabled: false } },
} as const satisfies Record<string, Scenario>;

export type ScenarioName = keyof typeof scenarios;

export interface Compilation {
  readonly cli: BicepCli;
  readonly version: string;
  /** ARM JSON of main.bicep. */
  readonly compiled: string;
  /** Parameters JSON that `bicep build-params main.bicepparam` writes. */
  readonly parameters: string;
  /** `bicep snapshot` of each scenario: `{ predictedResources, diagnostics, outputs }`. */
  readonly snapshots: Readonly<Record<ScenarioName, string>>;
  readonly diagnostics: {
    readonly build: readonly string[];
    readonly buildParams: readonly string[];
    /** `bicep lint` of every .bicep and .bicepparam file with the project's bicepconfig.json. */
    readonly lint: readonly string[];
    /** The same with every default-off rule on as a warning (config in a temp folder). */
    readonly strictLint: readonly string[];
    /** What `bicep snapshot` printed for each scenario (nothing, when it evaluates cleanly). */
    readonly snapshot: readonly string[];
  };
  /** The rules the strict lint turned on. */
  readonly strictRules: readonly string[];
}

interface LinterConfig {
  analyzers: { core: { enabled: boolean; rules: Record<string, { level: string }> } };
}

function infraFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return entry.name === 'tools' ? [] : infraFiles(path);
      return [path];
    })
    .sort();
}

function failOnExit(what: string, run: { status: number | null; stderr: string }): string[] {
  const found = diagnosticsOf(run.stderr);
  return run.status !== 0 && found.length === 0 ? [`${what} exited ${run.status}: ${run.stderr.trim()}`] : found;
}

export function strictConfig(infraDir: string): { config: LinterConfig; turnedOn: string[] } {
  const config = JSON.parse(readFileSync(join(infraDir, 'bicepconfig.json'), 'utf8')) as LinterConfig;
  const turnedOn = defaultOffRules.filter((rule) => config.analyzers.core.rules[rule] === undefined);
  for (const rule of turnedOn) config.analyzers.core.rules[rule] = { level: 'warning' };
  return { config, turnedOn };
}

const bicepLiteral = (value: Literal): string =>
  typeof value === 'string'
    ? `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
    : Array.isArray(value)
      ? `[${value.map(bicepLiteral).join(', ')}]`
      : String(value);

/**
 * `bicep snapshot` of infra/main.bicepparam (in `infraDir`) with a scenario's settings. The CLI writes
 * `<name>.snapshot.json` beside the parameters file, so a copy of it, pointing at main.bicep, goes in `scratch`.
 */
export function snapshot(
  cli: BicepCli,
  infraDir: string,
  scratch: string,
  name: string,
  scenario: Scenario,
): { text: string; problems: string[] } {
  mkdirSync(scratch, { recursive: true });
  const main = relative(scratch, join(infraDir, 'main.bicep'));
  const base = readFileSync(join(infraDir, 'main.bicepparam'), 'utf8').replace(/^using 'main\.bicep'$/m, `using '${main}'`);
  const extra = Object.entries(scenario.params).map(([param, value]) => `param ${param} = ${bicepLiteral(value)}\n`);
  const file = join(scratch, `${name}.bicepparam`);
  writeFileSync(file, `${base}\n${extra.join('')}`);
  const output = join(scratch, `${basename(file, '.bicepparam')}.snapshot.json`);
  rmSync(output, { force: true });
  const run = runBicep(
    cli,
    [
      'snapshot',
      file,
      '--mode',
      'overwrite',
      '--subscription-id',
      sampleIds.subscription,
      '--tenant-id',
      sampleIds.tenant,
      '--location',
      sampleParamEnv.AZURE_LOCATION!,
      '--deployment-name',
      `tallyho-${sampleParamEnv.AZURE_ENV_NAME}`,
    ],
    { ...sampleParamEnv, ...scenario.env },
  );
  const problems = failOnExit(`bicep snapshot (${name})`, run).map((line) => `${name}: ${line}`);
  if (!existsSync(output)) return { text: '', problems: problems.length > 0 ? problems : [`${name}: bicep snapshot wrote no ${output}`] };
  return { text: readFileSync(output, 'utf8'), problems };
}

function compileNow(cli: BicepCli, infraDir: string, scratch: string): Compilation {
  const version = runBicep(cli, ['--version']).stdout.trim();
  const main = join(infraDir, 'main.bicep');
  const build = runBicep(cli, ['build', main, '--stdout']);
  if (build.status !== 0) throw new Error(`bicep build failed (${cli.from}):\n${build.stderr}`);
  const params = runBicep(cli, ['build-params', join(infraDir, 'main.bicepparam'), '--stdout'], sampleParamEnv);
  const pattern = `${infraDir}/**/*.bicep*`;
  const lint = runBicep(cli, ['lint', '--pattern', pattern], sampleParamEnv);
  const { config, turnedOn } = strictConfig(infraDir);
  const strictDir = join(scratch, 'strict');
  mkdirSync(strictDir, { recursive: true });
  writeFileSync(join(strictDir, 'bicepconfig.json'), JSON.stringify(config, null, 2));
  const strict = runBicep(cli, ['lint', '--pattern', pattern, '--config', join(strictDir, 'bicepconfig.json')], sampleParamEnv);
  const snapshots = Object.fromEntries(
    Object.entries(scenarios).map(([name, scenario]) => [name, snapshot(cli, infraDir, join(scratch, 'scenarios'), name, scenario)]),
  ) as Record<ScenarioName, { text: string; problems: string[] }>;
  return {
    cli,
    version,
    compiled: build.stdout,
    parameters: params.status === 0 ? ((JSON.parse(params.stdout) as { parametersJson?: string }).parametersJson ?? '') : '',
    snapshots: Object.fromEntries(Object.entries(snapshots).map(([name, s]) => [name, s.text])) as Record<ScenarioName, string>,
    diagnostics: {
      build: diagnosticsOf(build.stderr),
      buildParams: failOnExit('bicep build-params', params),
      lint: failOnExit('bicep lint', lint),
      strictLint: failOnExit('bicep lint (strict)', strict),
      snapshot: Object.values(snapshots).flatMap((s) => s.problems),
    },
    strictRules: turnedOn,
  };
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Runs `make` unless another jest worker is already making `file`: then waits for it, so two
 * test files starting together compile once between them. A lock older than `staleMs` (a worker
 * that died) is taken over.
 */
function once(file: string, make: () => void, staleMs = 10 * 60_000): void {
  const lock = `${file}.lock`;
  for (;;) {
    if (existsSync(file)) return;
    try {
      mkdirSync(lock);
    } catch {
      if (Date.now() - statSync(lock).mtimeMs > staleMs) rmSync(lock, { recursive: true, force: true });
      else sleep(500);
      continue;
    }
    try {
      make();
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
    return;
  }
}

/** The compilation for the current sources, from the run's cache when another test file made it. */
export function compileInfra(cli: BicepCli, repoRoot: string, infraDir: string): Compilation {
  const hash = createHash('sha256').update(cli.path).update(defaultOffRules.join()).update(JSON.stringify({ scenarios, sampleIds }));
  for (const file of infraFiles(infraDir)) hash.update(relative(infraDir, file)).update(readFileSync(file));
  const scratch = join(repoRoot, 'test-artifacts', 'bicep');
  const digest = hash.digest('hex').slice(0, 16);
  const cached = join(scratch, `${digest}.json`);
  mkdirSync(scratch, { recursive: true });
  let made: Compilation | undefined;
  once(cached, () => {
    made = compileNow(cli, infraDir, join(scratch, digest));
    // Write then rename: a waiting worker never reads half a file.
    const partial = `${cached}.${process.pid}`;
    writeFileSync(partial, JSON.stringify({ ...made, cli: undefined }));
    renameSync(partial, cached);
  });
  if (made !== undefined) return made;
  const stored = JSON.parse(readFileSync(cached, 'utf8')) as Omit<Compilation, 'cli'>;
  return { ...stored, cli };
}
