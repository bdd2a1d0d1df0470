/**
 * What the tests use but do not test the making of, built once and reused until an input changes
 * (Azure SDK for JS: the pipeline builds, the tests consume): the .NET solution, the packed clients
 * with the apps that use them, and the deployment zip. Each artifact lives in
 * test-artifacts/<name>/<hash>/, where <hash> is a content hash of its inputs (the files, not their
 * times, and the recipe below), and is complete once it holds `.complete`; a new hash means a
 * rebuild, and older builds are removed after it.
 *
 * `npm test` builds every stale artifact before jest starts (scripts/test-artifacts.mjs); a test file
 * asks for the one it uses (`ensureArtifact`) and gets it at once — or, when jest runs without that
 * step (one file, say), builds it then. A lock folder keeps two processes from building one artifact
 * at the same time: the second waits for the first (a condition, not a clock: the lock goes when the
 * builder ends, or when its process is gone).
 *
 * CommonJS, so the script runs it with Node alone and the tests import it (artifacts.d.cts).
 */
const { spawn } = require('node:child_process');
const { createHash } = require('node:crypto');
const { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } = require('node:fs');
const { homedir } = require('node:os');
const { delimiter, dirname, join, relative } = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');

const { globSync } = require('tinyglobby');

const { pagePrograms, readPage } = require('./clientPages.cjs');
const { onPath } = require('./optionalTool.cjs');

const repoRoot = join(__dirname, '..', '..');
const artifactsRoot = join(repoRoot, 'test-artifacts');

/** Runs a tool to its end; rejects with its output when it fails. */
function run(command, args, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd ?? repoRoot,
      env: {
        ...process.env,
        PATH: [dirname(process.execPath), join(repoRoot, 'node_modules', '.bin'), process.env.PATH ?? ''].join(delimiter),
        DOTNET_NOLOGO: '1',
        DOTNET_CLI_TELEMETRY_OPTOUT: '1',
        DOTNET_SKIP_FIRST_TIME_EXPERIENCE: '1',
        npm_config_audit: 'false',
        npm_config_fund: 'false',
        ...options.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk.toString()));
    child.stderr.on('data', (chunk) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => {
      if (code === 0) resolve(output);
      else
        reject(new Error(`${command} ${args.join(' ')} (in ${options.cwd ?? repoRoot}) exited ${String(code)}:\n${output.slice(-8000)}`));
    });
  });
}

const installedVersion = (name) => JSON.parse(readFileSync(join(repoRoot, 'node_modules', name, 'package.json'), 'utf8')).version;

/** A scratch app as `dotnet new console` makes it, with a program of its own and the package added. */
async function dotnetApp(dir, name, program, packages, version) {
  mkdirSync(join(dir, name), { recursive: true });
  writeFileSync(
    join(dir, name, `${name}.csproj`),
    [
      '<Project Sdk="Microsoft.NET.Sdk">',
      '  <PropertyGroup>',
      '    <OutputType>Exe</OutputType>',
      '    <TargetFramework>net$(BundledNETCoreAppTargetFrameworkVersion)</TargetFramework>',
      '    <ImplicitUsings>enable</ImplicitUsings>',
      '    <Nullable>enable</Nullable>',
      '  </PropertyGroup>',
      '</Project>',
    ].join('\n'),
  );
  writeFileSync(join(dir, name, 'Program.cs'), program);
  await run('dotnet', ['add', 'package', 'Tallyho.Client', '--version', version, '--source', packages], { cwd: join(dir, name) });
  // `dotnet add package` has just restored the app.
  await run('dotnet', ['build', '--nologo', '--no-restore', '-c', 'Release'], { cwd: join(dir, name) });
}

/**
 * The artifacts: their inputs (globs under the repository; the hash covers each file's path and
 * bytes), the tool they need (absent: skipped, as its tests are), and how each is built into `dir`.
 */
const artifacts = {
  // The .NET solution (the client, its tests, the sample worker): dotnet test --no-build and the
  // mixed TypeScript/.NET worker job run its output.
  dotnet: {
    tool: 'dotnet',
    inputs: ['clients/dotnet/**', '!clients/dotnet/**/{bin,obj}/**'],
    async build(dir) {
      await run('dotnet', ['build', join(repoRoot, 'clients', 'dotnet', 'Tallyho.Client.slnx'), '--nologo', '--artifacts-path', dir]);
    },
  },
  // @tallyho/client as a user gets it: `npm pack` of a copy without dist/ (its prepack builds it),
  // installed with the consumer's compiler into a scratch app outside any workspace.
  'npm-client': {
    inputs: ['clients/typescript/**', '!clients/typescript/{dist,node_modules,test}/**', '!**/*.tgz', 'package-lock.json'],
    async build(dir) {
      const source = join(dir, 'package-source');
      cpSync(join(repoRoot, 'clients', 'typescript'), source, {
        recursive: true,
        filter: (path) => !/[\\/](dist|node_modules|test)$|\.tgz$/.test(path),
      });
      await run('npm', ['pack', '--pack-destination', dir], { cwd: source });
      rmSync(source, { recursive: true, force: true });
      const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'));
      if (tarball === undefined) throw new Error('npm pack made no tarball');
      renameSync(join(dir, tarball), join(dir, 'client.tgz'));
      const app = join(dir, 'app');
      mkdirSync(app);
      writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'scratch-app', private: true, type: 'module' }));
      await run(
        'npm',
        [
          'install',
          '--prefer-offline',
          join(dir, 'client.tgz'),
          `typescript@${installedVersion('typescript')}`,
          `@types/node@${installedVersion('@types/node')}`,
        ],
        { cwd: app },
      );
    },
  },
  // Tallyho.Client as a user gets it: `dotnet pack`, added to two apps outside the repository that
  // hold the page's programs (docs/client-dotnet.md: the quick start, and the other examples).
  'nuget-client': {
    tool: 'dotnet',
    inputs: [
      'clients/dotnet/src/**',
      'clients/dotnet/*',
      '!clients/dotnet/**/{bin,obj}/**',
      'docs/client-dotnet.md',
      'test/support/clientPages.cjs',
    ],
    async build(dir, hash) {
      // A version of its own per content, so NuGet's global cache never hands back another build.
      const version = `0.1.0-e2e.${hash.slice(0, 12)}`;
      const packages = join(dir, 'packages');
      await run('dotnet', [
        'pack',
        join(repoRoot, 'clients', 'dotnet', 'src', 'Tallyho.Client'),
        '-c',
        'Release',
        '-o',
        packages,
        '--artifacts-path',
        join(dir, 'pack'),
        `-p:Version=${version}`,
        '--nologo',
      ]);
      rmSync(join(dir, 'pack'), { recursive: true, force: true });
      const programs = pagePrograms(readPage(repoRoot, 'docs/client-dotnet.md'), 'csharp');
      await dotnetApp(dir, 'QuickStart', programs.quickStart, packages, version);
      await dotnetApp(dir, 'Page', programs.rest, packages, version);
      // The apps carry their copy of the library; the global cache needs none of these versions.
      rmSync(join(process.env.NUGET_PACKAGES ?? join(homedir(), '.nuget', 'packages'), 'tallyho.client', version), {
        recursive: true,
        force: true,
      });
    },
  },
  // The deployment zip as scripts/deploy.sh makes it from the build (`--package-only --from-build`).
  'deploy-package': {
    tool: 'zip',
    inputs: ['dist/**', '!dist/.build-inputs', 'scripts/**', 'package.json', 'package-lock.json', 'host.json', '.funcignore'],
    async build(dir) {
      await run('bash', [join(repoRoot, 'scripts', 'deploy.sh'), '--package-only', '--from-build']);
      copyFileSync(join(repoRoot, '.deploy', 'tallyho.zip'), join(dir, 'tallyho.zip'));
    },
  },
};

/** The content hash of an artifact's inputs (and of this file's recipe for it). */
function fingerprint(name) {
  const artifact = artifacts[name];
  if (artifact === undefined) throw new Error(`no artifact named ${name} (test/support/artifacts.cjs)`);
  const hash = createHash('sha256');
  hash.update(`${name}\0${artifact.build.toString()}\0`);
  const files = globSync(artifact.inputs, { cwd: repoRoot, dot: true, onlyFiles: true }).sort();
  for (const file of files) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(join(repoRoot, file)));
    hash.update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

/** Where the artifact for the current inputs is (or will be). */
function artifactDir(name) {
  return join(artifactsRoot, name, fingerprint(name));
}

/** The tool an artifact needs, when it is missing here (its tests are skipped or, under CI=true, fail). */
function missingTool(name) {
  const tool = artifacts[name].tool;
  return tool === undefined || onPath(tool) !== undefined ? undefined : tool;
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Takes the artifact's lock, or waits while a live process holds it; a dead holder's lock is taken over. */
async function withLock(name, work) {
  const lock = join(artifactsRoot, `${name}.lock`);
  mkdirSync(artifactsRoot, { recursive: true });
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      const holder = Number(existsSync(join(lock, 'pid')) ? readFileSync(join(lock, 'pid'), 'utf8') : NaN);
      if (Number.isFinite(holder) && !alive(holder)) rmSync(lock, { recursive: true, force: true });
      else await sleep(500);
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * The artifact's folder, built first when its inputs changed since the last build. `log` hears what
 * happens (the script prints it).
 */
async function ensureArtifact(name, log = () => undefined) {
  const missing = missingTool(name);
  if (missing !== undefined) throw new Error(`the ${name} artifact needs ${missing}, which is not on PATH`);
  const hash = fingerprint(name);
  const dir = join(artifactsRoot, name, hash);
  if (existsSync(join(dir, '.complete'))) {
    log(`${name}: up to date (${relative(repoRoot, dir)})`);
    return dir;
  }
  return withLock(name, async () => {
    if (existsSync(join(dir, '.complete'))) {
      log(`${name}: built meanwhile by another process (${relative(repoRoot, dir)})`);
      return dir;
    }
    const started = Date.now();
    // Built where it is used (the .NET builds record their paths): a folder without `.complete` is
    // an interrupted build, started again from nothing.
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    log(`${name}: building (its inputs changed)`);
    await artifacts[name].build(dir, hash);
    writeFileSync(join(dir, '.complete'), `${new Date().toISOString()}\n`);
    // Only the newest build is kept.
    for (const other of readdirSync(join(artifactsRoot, name)))
      if (other !== hash) rmSync(join(artifactsRoot, name, other), { recursive: true, force: true });
    log(`${name}: built in ${((Date.now() - started) / 1000).toFixed(0)} s (${relative(repoRoot, dir)})`);
    return dir;
  });
}

module.exports = { artifactNames: Object.keys(artifacts), artifactDir, ensureArtifact, missingTool };
