/**
 * Loads the infra templates once per test file: the Bicep-source model always, and — when a Bicep
 * CLI is available (BICEP_PATH, PATH, or the NuGet package .ci/run restores) — the compiled ARM
 * JSON, its model, and the linter's diagnostics for every .bicep file.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

import { armModel } from './armModel';
import { type BicepCli, diagnosticsOf, findBicep, runBicep } from './bicepCli';
import { bicepModel } from './bicepModel';
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

export interface CompiledTemplates {
  readonly cli: BicepCli;
  readonly compiled: string;
  /** Diagnostics of `bicep build` on main.bicep and `bicep lint` on every file. */
  readonly diagnostics: readonly string[];
  readonly model: TemplateModel;
}

export interface Templates {
  readonly bicep: TemplateModel;
  readonly compiled: CompiledTemplates | undefined;
  /** The models every policy applies to: the source model, and the compiled one when there is one. */
  readonly models: readonly TemplateModel[];
}

let notified = false;

function compile(cli: BicepCli): CompiledTemplates {
  const build = runBicep(cli, ['build', mainBicep, '--stdout']);
  if (build.status !== 0) throw new Error(`bicep build failed (${cli.from}):\n${build.stderr}`);
  const diagnostics = diagnosticsOf(build.stderr);
  for (const file of bicepFiles()) {
    const lint = runBicep(cli, ['lint', file]);
    diagnostics.push(...diagnosticsOf(`${lint.stdout}\n${lint.stderr}`));
    if (lint.status !== 0 && diagnosticsOf(`${lint.stdout}\n${lint.stderr}`).length === 0) {
      diagnostics.push(`${file}: bicep lint exited ${lint.status}: ${lint.stderr}`);
    }
  }
  return { cli, compiled: build.stdout, diagnostics, model: armModel(build.stdout) };
}

export async function loadTemplates(): Promise<Templates> {
  const bicep = await bicepModel(mainBicep);
  const cli = findBicep();
  if (cli === undefined && !notified) {
    notified = true;
    console.warn(
      'Bicep CLI not found (BICEP_PATH, PATH, or NuGet Azure.Bicep.CommandLine.linux-x64 via `dotnet restore infra/tools`): ' +
        'the full compile and the Bicep linter did NOT run. Checked: syntax (tree-sitter-bicep) and the policies on a model read from the sources.',
    );
  }
  const compiled = cli === undefined ? undefined : compile(cli);
  return { bicep, compiled, models: compiled === undefined ? [bicep] : [bicep, compiled.model] };
}
