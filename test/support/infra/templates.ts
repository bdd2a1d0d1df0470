/**
 * Loads the infra templates once per test file: the Bicep-source model always, and — when a Bicep
 * CLI is available (BICEP_PATH, PATH, or the NuGet package .ci/run restores) — the compiled ARM
 * JSON, its model, and the diagnostics of build, build-params and lint (compiled once per run).
 * Under CI=true a missing CLI is a failure, never a fallback.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

import { armModel } from './armModel';
import { findBicep, missingBicepMessage } from './bicepCli';
import { bicepModel } from './bicepModel';
import { type Compilation, compileInfra } from './compile';
import type { TemplateModel } from './templateModel';

export const repoRoot = join(__dirname, '..', '..', '..');
export const infraDir = join(repoRoot, 'infra');
export const mainBicep = join(infraDir, 'main.bicep');

export function bicepFiles(dir: string = infraDir): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'tools' ? [] : bicepFiles(path);
    return entry.name.endsWith('.bicep') ? [path] : [];
  });
}

export interface CompiledTemplates extends Compilation {
  readonly model: TemplateModel;
}

export interface Templates {
  readonly bicep: TemplateModel;
  readonly compiled: CompiledTemplates | undefined;
  /** The models every policy applies to: the source model, and the compiled one when there is one. */
  readonly models: readonly TemplateModel[];
}

let notified = false;

/** The compiled templates, or undefined (with one loud notice) where a laptop has no CLI. */
export function compiledTemplates(env: NodeJS.ProcessEnv = process.env): CompiledTemplates | undefined {
  const cli = findBicep(env);
  if (cli === undefined) {
    // CI must prove the templates compile: falling back there would let a broken template land.
    if (env.CI === 'true') throw new Error(`CI=true: ${missingBicepMessage(env)}`);
    if (!notified) {
      notified = true;
      console.warn(
        `${missingBicepMessage(env)} The full compile and the Bicep linter did NOT run; ` +
          'checked: syntax (tree-sitter-bicep) and the policies on a model read from the sources.',
      );
    }
    return undefined;
  }
  const compilation = compileInfra(cli, repoRoot, infraDir);
  return { ...compilation, model: armModel(compilation.compiled) };
}

export async function loadTemplates(options: { compile?: boolean } = {}): Promise<Templates> {
  const bicep = await bicepModel(mainBicep);
  const compiled = options.compile === false ? undefined : compiledTemplates();
  return { bicep, compiled, models: compiled === undefined ? [bicep] : [bicep, compiled.model] };
}
