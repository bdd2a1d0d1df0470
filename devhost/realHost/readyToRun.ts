/**
 * Precompiles (ReadyToRun) the managed assemblies of a host build copy or of the app's extensions, so
 * that a host start does not JIT-compile them. Why it matters here: the host build ships IL only, and
 * its runtimeconfig turns tiered compilation off, so each start compiles every method it runs at full
 * optimisation. On 2 cores (load 7) a start took 6.0–6.6 s of CPU as shipped and 3.8–4.2 s with the host
 * and the extensions precompiled (devhost/docs/real-host.md, "Start-up cost").
 *
 * Behaviour does not change: ReadyToRun code is the same IL compiled ahead of time against the runtime
 * that will run it, each assembly on its own (its own version bubble), and the runtime checks every
 * precompiled method's assumptions when it loads it and JIT-compiles the method instead when one fails
 * (https://learn.microsoft.com/dotnet/core/deploying/ready-to-run).
 *
 * crossgen2 comes from NuGet (`Microsoft.NETCore.App.Crossgen2.<rid>`, the version of the runtime the
 * host rolls forward to). Compiled assemblies are kept in a cache by content, crossgen2 and runtime
 * version, so a machine compiles each once. Whatever cannot be precompiled (no crossgen2 for this
 * platform or runtime, not a managed assembly, already precompiled) stays as it was: a slower start,
 * never a different one.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

import { runCommand } from './command';
import type { HostBuild } from './hostBuild';
import { onceAcrossProcesses } from './once';

export interface ReadyToRunOptions {
  /** Where crossgen2 and the compiled assemblies are kept (default: the user's cache folder). */
  readonly cacheDir?: string;
  /** Assemblies the compiled ones reference besides the framework's and their own folder's (e.g. the host's, for the extensions). */
  readonly references?: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
}

export interface ReadyToRunResult {
  /** Assemblies now precompiled (from the cache or compiled now). */
  readonly precompiled: number;
  /** Of those, compiled by this call (the rest came from the cache). */
  readonly compiledNow: number;
  /** Left as IL: not a managed IL assembly, or crossgen2 refused it. */
  readonly leftAsIs: number;
  /** Why nothing was precompiled, when nothing could be. */
  readonly skipped?: string;
}

interface Runtime {
  readonly version: string;
  readonly dirs: readonly string[];
}

function defaultReadyToRunCache(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'tallyho', 'readytorun');
}

interface Target {
  /** The runtime identifier in crossgen2's package name. */
  readonly rid: string;
  readonly os: string;
  readonly arch: string;
}

/** What crossgen2 compiles for on this machine, or undefined where no crossgen2 is published. */
function thisMachine(): Target | undefined {
  const os = ({ linux: ['linux', 'linux'], darwin: ['osx', 'osx'], win32: ['win', 'windows'] } as Record<string, [string, string]>)[
    process.platform
  ];
  const arch = ({ x64: 'x64', arm64: 'arm64' } as Record<string, string>)[process.arch];
  return os === undefined || arch === undefined ? undefined : { rid: `${os[0]}-${arch}`, os: os[1], arch };
}

/**
 * The runtime the host runs on: it targets .NET 8 and runs with DOTNET_ROLL_FORWARD=Major, so the
 * lowest installed major.minor from 8.0 on, at its highest patch (the rule of roll-forward "Major").
 */
export function hostRuntime(listRuntimes: string): Runtime | undefined {
  const found = [...listRuntimes.matchAll(/^(Microsoft\.(?:NETCore|AspNetCore)\.App) ((\d+)\.(\d+)\.(\d+)\S*) \[(.+)\]$/gm)].map((m) => ({
    name: m[1] ?? '',
    version: [Number(m[3]), Number(m[4]), Number(m[5])] as const,
    text: m[2] ?? '',
    dir: join(m[6] ?? '', m[2] ?? ''),
  }));
  const core = found.filter((r) => r.name === 'Microsoft.NETCore.App' && r.version[0] >= 8);
  const [lowest] = core.sort((a, b) => a.version[0] - b.version[0] || a.version[1] - b.version[1]);
  if (lowest === undefined) return undefined;
  const band = (r: (typeof found)[number]): boolean => r.version[0] === lowest.version[0] && r.version[1] === lowest.version[1];
  const newest = (name: string) => found.filter((r) => r.name === name && band(r)).sort((a, b) => b.version[2] - a.version[2])[0];
  const netcore = newest('Microsoft.NETCore.App');
  const aspnet = newest('Microsoft.AspNetCore.App');
  if (netcore === undefined) return undefined;
  return { version: netcore.text, dirs: [netcore.dir, ...(aspnet === undefined ? [] : [aspnet.dir])] };
}

/** crossgen2 of `version` for `rid`, restored once from NuGet into the cache. */
async function crossgen2(cacheDir: string, rid: string, version: string, env: NodeJS.ProcessEnv): Promise<string> {
  const id = `Microsoft.NETCore.App.Crossgen2.${rid}`;
  const home = join(cacheDir, `crossgen2-${rid}-${version}`);
  const tool = join(home, 'packages', id.toLowerCase(), version, 'tools', process.platform === 'win32' ? 'crossgen2.exe' : 'crossgen2');
  mkdirSync(cacheDir, { recursive: true });
  await onceAcrossProcesses(
    `${home}.lock`,
    () => existsSync(tool),
    async () => {
      mkdirSync(home, { recursive: true });
      const project = [
        '<Project Sdk="Microsoft.NET.Sdk">',
        '  <PropertyGroup><TargetFramework>netstandard2.0</TargetFramework></PropertyGroup>',
        `  <ItemGroup><PackageDownload Include="${id}" Version="[${version}]" /></ItemGroup>`,
        '</Project>',
        '',
      ].join('\n');
      writeFileSync(join(home, 'crossgen2.csproj'), project);
      const restored = await runCommand('dotnet', ['restore', 'crossgen2.csproj', '--packages', join(home, 'packages')], {
        env,
        cwd: home,
      });
      if (restored.code !== 0) throw new Error(`restoring ${id} ${version} failed:\n${restored.output.slice(-2000)}`);
    },
  );
  return tool;
}

const assembliesIn = (dir: string): string[] =>
  readdirSync(dir)
    .filter((name) => name.endsWith('.dll'))
    .sort();

/**
 * Replaces every managed assembly directly in `dir` (a private copy: it is changed in place) with its
 * ReadyToRun form, compiling those the cache does not hold yet.
 */
export async function precompileFolder(dir: string, options: ReadyToRunOptions = {}): Promise<ReadyToRunResult> {
  const tools = await readyToRunTools(options);
  return 'skipped' in tools ? none(tools.skipped) : compileFolder(tools, dir, options.references ?? []);
}

interface Tools {
  readonly env: NodeJS.ProcessEnv;
  readonly target: Target;
  readonly runtime: Runtime;
  readonly tool: string;
  readonly cacheDir: string;
}

const none = (skipped: string): ReadyToRunResult => ({ precompiled: 0, compiledNow: 0, leftAsIs: 0, skipped });

/** crossgen2 and the runtime to compile against, or why there are none here. */
async function readyToRunTools(options: Pick<ReadyToRunOptions, 'cacheDir' | 'env'>): Promise<Tools | { skipped: string }> {
  const env = { DOTNET_NOLOGO: '1', DOTNET_CLI_TELEMETRY_OPTOUT: '1', ...(options.env ?? process.env) };
  const target = thisMachine();
  if (target === undefined) return { skipped: `no crossgen2 is published for ${process.platform}-${process.arch}` };
  const list = spawnSync('dotnet', ['--list-runtimes'], { encoding: 'utf8', env });
  const runtime = list.status === 0 ? hostRuntime(list.stdout) : undefined;
  if (runtime === undefined) return { skipped: 'no .NET runtime from 8.0 on was found (dotnet --list-runtimes)' };
  const cacheDir = options.cacheDir ?? defaultReadyToRunCache(env);
  try {
    return { env, target, runtime, cacheDir, tool: await crossgen2(cacheDir, target.rid, runtime.version, env) };
  } catch (err) {
    return { skipped: err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err) };
  }
}

async function compileFolder(tools: Tools, dir: string, extraReferences: readonly string[]): Promise<ReadyToRunResult> {
  const { env, target, runtime, tool, cacheDir } = tools;
  const compiled = join(cacheDir, `assemblies-${target.rid}-${runtime.version}`);
  mkdirSync(compiled, { recursive: true });
  // The host's assemblies before the folder's own: where both hold one (Azure.Core, WebJobs.Host), the
  // host loads its own, and compiling against the other copy made crossgen2 fail on several extensions.
  const referenceDirs = [...runtime.dirs, ...extraReferences, dir];
  const references = referenceDirs.map((d) => `${d}/*.dll`);
  // Which references there were is in every key, by name (each folder by its position, not its path:
  // the host build is a fresh copy each run). Not by content: precompiled code stays correct when a
  // reference changes, as the runtime checks the layouts it relied on and JIT-compiles a method whose
  // checks fail; and the app's own extensions.dll differs with every build (its PDB path).
  const against = createHash('sha256');
  referenceDirs.forEach((d, i) => against.update(`${i}:${assembliesIn(d).join(',')}\n`));
  const referencesKey = against.digest('hex');
  const assemblies = assembliesIn(dir);
  let precompiled = 0;
  let compiledNow = 0;
  let leftAsIs = 0;
  // One at a time: crossgen2 compiles on two threads of its own.
  for (const name of assemblies) {
    const path = join(dir, name);
    const key = createHash('sha256').update(referencesKey).update(readFileSync(path)).digest('hex').slice(0, 32);
    const done = join(compiled, `${key}.dll`);
    const refused = join(compiled, `${key}.refused`);
    if (!existsSync(done) && !existsSync(refused)) {
      const scratch = join(compiled, `${key}.${process.pid}.tmp`);
      const args = [path, '-o', scratch, '-O', '--targetos', target.os, '--targetarch', target.arch];
      const result = await runCommand(tool, [...args, ...references.flatMap((r) => ['-r', r])], { env, stallMs: 60_000 });
      // Not a managed assembly, or one already precompiled: crossgen2 says so and exits non-zero. A
      // hung one is tried again next time; a refusal is kept.
      if (result.code === 0) {
        renameSync(scratch, done);
        compiledNow++;
      } else {
        rmSync(scratch, { force: true });
        if (result.code !== null) writeFileSync(refused, result.output.slice(-2000));
      }
    }
    if (existsSync(done)) {
      copyFileSync(done, path);
      precompiled++;
    } else leftAsIs++;
  }
  return { precompiled, compiledNow, leftAsIs };
}

/**
 * A host build copy and the app's extensions, both precompiled: the build's copy in place, the
 * extensions (a shared cache folder) as a copy in `parent`, whose path is returned for `copyApp`.
 */
export async function precompileHost(
  build: HostBuild,
  extensionsBin: string,
  parent: string,
  say: (line: string) => void = () => undefined,
): Promise<string> {
  const extensions = join(parent, `extensions-${process.pid}`);
  cpSync(extensionsBin, extensions, { recursive: true });
  const tools = await readyToRunTools({});
  const [host, ext] =
    'skipped' in tools
      ? [none(tools.skipped), none(tools.skipped)]
      : [await compileFolder(tools, build.dir, []), await compileFolder(tools, extensions, [build.dir])];
  const told = (r: ReadyToRunResult): string =>
    r.skipped ?? `${r.precompiled} assemblies (${r.compiledNow} compiled now, the rest from the cache), ${r.leftAsIs} left as they were`;
  say(`The real host's assemblies precompiled (ReadyToRun): the host ${told(host)}; the extensions ${told(ext)}.`);
  return extensions;
}
