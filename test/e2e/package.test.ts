/**
 * The deployment package as `scripts/deploy.sh` builds it (`--package-only --from-build`, the zip
 * the publish step uploads): package.json `main` is inside it, the app is the bundle
 * (scripts/build-app.mjs) with no node_modules beside it, and the app loads and serves from the
 * unzipped package alone, with every function the source registers — a dependency the bundle left
 * outside, or a `main` outside the zip (what "deployed, but 0 functions" looks like in Azure), fails
 * here. Needs zip and unzip (skipped, and announced, without them; required when CI=true).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ensureArtifact } from '../support/artifacts.cjs';
import { deployed } from '../support/deployment';
import { type E2eHost, ownHostTest, startE2eHost } from './support/harness';
import { sharedE2eHost } from './support/sharedHost';
import { registeredFunctions } from './support/functions';
import { requestJson } from './support/http';
import { describeWithTool, onPath } from '../support/optionalTool';

async function functionNames(host: E2eHost): Promise<string[]> {
  return (await registeredFunctions(host)).map((f) => f.name).sort();
}

const zipTools = {
  name: 'zip and unzip',
  neededBy: 'the deployment package tests',
  enable: 'apt-get install zip unzip (.ci/run does)',
  locate: () => (onPath('zip') !== undefined ? onPath('unzip') : undefined),
};

describeWithTool(zipTools, 'the deployment package', () => {
  let unpacked: string;
  let entries: string[];

  beforeAll(async () => {
    // Built before jest (test/support/artifacts.cjs), once for both hosts' runs of this file, and again
    // only when the build or the packaging changed.
    const zipFile = join(await ensureArtifact('deploy-package'), 'tallyho.zip');
    entries = execFileSync('unzip', ['-Z1', zipFile], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }).split('\n');
    unpacked = mkdtempSync(join(tmpdir(), 'tallyho-package-'));
    execFileSync('unzip', ['-q', zipFile, '-d', unpacked]);
    // Waits for the artifact, which npm test builds beside jest: a wide net for a busy machine's build.
  }, 20 * 60_000);

  afterAll(() => {
    rmSync(unpacked, { recursive: true, force: true });
  });

  test('holds main, the bundle with its source map, host.json and package.json, and nothing else of the repository', () => {
    const manifest = JSON.parse(readFileSync(join(unpacked, 'package.json'), 'utf8')) as { main: string; dependencies?: unknown };
    expect(manifest.main).toBe('dist/app/index.js');
    // The dependencies are inside the bundle: listed, a remote build would install them again.
    expect(manifest.dependencies).toBeUndefined();
    expect(entries).toEqual(
      expect.arrayContaining([manifest.main, 'dist/app/tallyho.js', 'dist/app/tallyho.js.map', 'host.json', 'package.json']),
    );
    const files = entries.filter((e) => e !== '' && !e.endsWith('/'));
    // The built code is what a real host in the tests serves (deployed.code), and nothing else.
    const shipped = (e: string) => e === 'host.json' || e === 'package.json' || deployed.code.some((folder) => e.startsWith(`${folder}/`));
    expect(files.filter((e) => !shipped(e))).toEqual([]);
    expect(deployed.code.every((folder) => files.some((e) => e.startsWith(`${folder}/`)))).toBe(true);
    expect(files.some((e) => e.includes('node_modules/'))).toBe(false);
    // The bundle's code cache ships only to an app on the Node major that made it (the package is
    // built for deploy.sh's default runtime here: TALLYHO_NODE_VERSION, else 22).
    const runtime = process.env.TALLYHO_NODE_VERSION ?? '22';
    const shipsCache = process.versions.node.split('.')[0] === runtime;
    expect(files.includes('dist/app/tallyho.js.cache')).toBe(shipsCache);
    // A cache serves the path it was made for: the package's is for Azure's (Linux apps run at /home/site/wwwroot).
    if (shipsCache) {
      const cache = readFileSync(join(unpacked, 'dist', 'app', 'tallyho.js.cache'));
      const name = cache.toString('utf8', 36, 36 + cache.readUInt32BE(32));
      expect(name).toBe('/home/site/wwwroot/dist/app/tallyho.js');
    }
  });

  ownHostTest('loads from the unpacked zip alone and registers every function the source does', async () => {
    const packaged = await startE2eHost({ appRoot: unpacked });
    // The repository's app, as the files share it.
    const source = await sharedE2eHost();
    try {
      const names = await functionNames(packaged);
      expect(names.length).toBeGreaterThan(20);
      expect(names).toEqual(await functionNames(source));
      const health = await requestJson<{ status: string }>(packaged, 'GET', '/api/health');
      expect(health.status).toBe(200);
      // The console's assets are built into dist/shared: the page must come with the package.
      const page = await fetch(packaged.url('/api/console'));
      expect(page.status).toBe(200);
      const asset = /src="([^"]+\.js)"/.exec(await page.text())?.[1];
      expect(asset).toBeDefined();
      expect((await fetch(new URL(asset as string, packaged.url('/api/console')))).status).toBe(200);
    } finally {
      await packaged.stop();
      await source.stop();
    }
  });
});
