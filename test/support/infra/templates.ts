/**
 * The infra templates as the real Bicep CLI sees them: the compiled ARM JSON, the diagnostics of
 * build, build-params and lint, and the deployment each scenario's snapshot predicts (compiled once
 * per run, compile.ts). Every infra test needs the CLI: without one they are skipped with the
 * project's one-line notice (test/support/optionalTool.cjs), and under CI=true that is a failure.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

import { describeWithTool, type OptionalTool } from '../optionalTool';
import { type BicepCli, findBicep, howToGetBicep } from './bicepCli';
import { type Compilation, compileInfra, type ScenarioName, scenarios } from './compile';
import { type Deployment, deploymentOf, type JsonObject } from './deployment';

export const repoRoot = join(__dirname, '..', '..', '..');
export const infraDir = join(repoRoot, 'infra');

export function bicepFiles(dir: string = infraDir): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'tools' ? [] : bicepFiles(path);
    return entry.name.endsWith('.bicep') ? [path] : [];
  });
}

/** The Bicep CLI as an optional tool: found as findBicep finds it, required when CI=true. */
export function bicepTool(env: NodeJS.ProcessEnv = process.env): OptionalTool {
  return {
    name: 'the Bicep CLI',
    neededBy: 'the infra tests (compile, lint and every policy on the compiled template)',
    enable: howToGetBicep(env),
    locate: () => findBicep(env)?.path,
  };
}

/**
 * `describe` for tests that need the compiled templates: skipped, with the notice, without a Bicep
 * CLI. Its body gets the templates (read in a beforeAll) through a getter.
 */
export function describeInfra(name: string, body: (templates: () => Templates) => void): void {
  describeWithTool(bicepTool(), name, () => {
    let loaded: Templates | undefined;
    // The run's first compile (build, build-params, two lints, a snapshot per scenario) took about
    // 20 s of CPU, 84 s on the clock, on a shared 2-core AMD EPYC (load average 13) with Bicep
    // 0.49.2; every later test file reads it from the run's cache.
    beforeAll(() => {
      loaded = loadTemplates();
    }, 600_000);
    body(() => {
      if (loaded === undefined) throw new Error('the templates are read in beforeAll');
      return loaded;
    });
  });
}

export interface Templates extends Compilation {
  /** The compiled main.bicep. */
  readonly arm: ArmTemplate;
  /** What each scenario deploys (compile.ts). */
  readonly deployments: Readonly<Record<ScenarioName, Deployment>>;
}

export interface ArmTemplate {
  readonly parameters?: Readonly<Record<string, { readonly defaultValue?: unknown }>>;
  readonly variables?: Readonly<Record<string, unknown>>;
  readonly resources?: Readonly<Record<string, ArmResource>>;
  readonly outputs?: Readonly<Record<string, { readonly value?: unknown }>>;
}
interface ArmResource {
  readonly type?: string;
  readonly condition?: string;
  readonly properties?: { readonly template?: ArmTemplate } & JsonObject;
}

/** The compiled templates, from the run's cache. Call it inside describeInfra: it needs the CLI. */
function loadTemplates(cli: BicepCli | undefined = findBicep()): Templates {
  if (cli === undefined) throw new Error('loadTemplates needs a Bicep CLI: call it inside describeInfra');
  const compilation = compileInfra(cli, repoRoot, infraDir);
  const deployments = Object.fromEntries(
    Object.keys(scenarios).map((name) => [name, deploymentOf(name, compilation.snapshots[name as ScenarioName] || '{}')]),
  ) as Record<ScenarioName, Deployment>;
  return { ...compilation, arm: JSON.parse(compilation.compiled) as ArmTemplate, deployments };
}

/** The compiled template and every nested (module) template in it, with its module path. */
export function armTemplates(template: ArmTemplate, path = 'main'): { readonly path: string; readonly template: ArmTemplate }[] {
  return [
    { path, template },
    ...Object.entries(template.resources ?? {}).flatMap(([symbol, resource]) =>
      resource.properties?.template === undefined ? [] : armTemplates(resource.properties.template, `${path}/${symbol}`),
    ),
  ];
}
