/**
 * package.json `allowScripts` denies every dependency's install script (README, Quick start): the
 * packages with native code find their prebuilt binaries without them. Pinned here: each loads its
 * platform package's binary, not a WebAssembly or JavaScript fallback, so nothing is silently slower
 * for the scripts not having run. Each is loaded in a fresh process, so its binding is the one in use.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');

/** The files the snippet loaded (require.cache), from a fresh Node process in the repository. */
function loadedBy(snippet: string): string[] {
  const script = `${snippet}; process.stdout.write(JSON.stringify(Object.keys(require.cache)));`;
  const run = spawnSync(process.execPath, ['-e', script], { cwd: root, encoding: 'utf8', timeout: 30_000 });
  if (run.status !== 0) throw new Error(`node -e failed (${run.status}):\n${run.stderr}`);
  return JSON.parse(run.stdout) as string[];
}

const nativeBinding = /\.node$/;

describe('dependencies whose install scripts are denied', () => {
  test('allowScripts records a decision for each of them', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> };
    expect(pkg.allowScripts).toMatchObject({
      '@parcel/watcher': false,
      '@scarf/scarf': false,
      '@swc/core': false,
      esbuild: false,
      'unrs-resolver': false,
    });
  });

  test('@swc/core (jest transforms) loads its native binding', () => {
    const files = loadedBy("require('@swc/core').transformSync('const a: number = 1', { jsc: { parser: { syntax: 'typescript' } } })");
    expect(files.filter((f) => nativeBinding.test(f) && f.includes('@swc/core-'))).toHaveLength(1);
    expect(files.some((f) => f.includes('@swc/wasm'))).toBe(false);
  });

  test("unrs-resolver (jest's resolver) loads its native binding", () => {
    const files = loadedBy("require(require.resolve('unrs-resolver', { paths: [require.resolve('jest-resolve')] }))");
    expect(files.filter((f) => nativeBinding.test(f) && f.includes('@unrs/resolver-binding-'))).toHaveLength(1);
    expect(files.some((f) => f.includes('wasm32-wasi'))).toBe(false);
  });

  test('@parcel/watcher (jest --watch) loads its prebuilt binding', () => {
    const files = loadedBy("require('@parcel/watcher')");
    expect(files.filter((f) => nativeBinding.test(f) && f.includes('@parcel/watcher-'))).toHaveLength(1);
  });

  test('esbuild (npm run build) runs the binary of its platform package', () => {
    const run = spawnSync(
      process.execPath,
      ['-e', "const e = require('esbuild'); process.stdout.write(e.transformSync('let a = 1').code + e.version)"],
      { cwd: root, encoding: 'utf8', timeout: 30_000 },
    );
    const installed = (JSON.parse(readFileSync(join(root, 'node_modules', 'esbuild', 'package.json'), 'utf8')) as { version: string })
      .version;
    // The JavaScript API starts the binary it resolves from @esbuild/<platform> and refuses one of another version.
    expect(run.stdout).toBe(`let a = 1;\n${installed}`);
  });
});
