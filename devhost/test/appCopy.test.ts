/**
 * The app copy a real host serves (realHost/appCopy.ts): by default the top folder of `main`, or
 * only the folders the app says it deploys (and no node_modules when it ships none), and never a
 * copy whose `main` the host could not load.
 */
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { copyApp } from '../realHost/appCopy';

/** lstat without following a link: a dangling link is still there. */
const lstatOrUndefined = (path: string) => lstatSync(path, { throwIfNoEntry: false });

describe('copyApp', () => {
  let root: string;
  let app: string;
  let bin: string;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'app-copy-'));
    app = join(root, 'app');
    bin = join(root, 'bin');
    for (const dir of [join(app, 'dist/app'), join(app, 'dist/tools'), join(app, 'node_modules'), bin]) mkdirSync(dir, { recursive: true });
    writeFileSync(join(app, 'dist/app/index.js'), 'module.exports = {};\n');
    writeFileSync(join(app, 'dist/tools/big.js'), '// not deployed\n');
    writeFileSync(join(app, 'host.json'), JSON.stringify({ version: '2.0', extensionBundle: { id: 'bundle' } }));
    writeFileSync(join(bin, 'extensions.dll'), '');
  });
  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
  });

  const manifest = (main: string) => writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', main }));

  it('copies the top folder of main by default, host.json without the bundle, and the extensions', () => {
    manifest('dist/app/index.js');
    const copy = copyApp({ appRoot: app, extensionsBin: bin, parent: root });
    expect(existsSync(join(copy, 'dist/app/index.js'))).toBe(true);
    expect(existsSync(join(copy, 'dist/tools/big.js'))).toBe(true);
    expect(existsSync(join(copy, 'bin/extensions.dll'))).toBe(true);
    expect(JSON.parse(readFileSync(join(copy, 'host.json'), 'utf8'))).toEqual({ version: '2.0' });
    // As `func start` in the app's folder would find them.
    expect(realpathSync(join(copy, 'node_modules'))).toBe(realpathSync(join(app, 'node_modules')));
  });

  it('copies only the folders given as what the app deploys', () => {
    manifest('./dist/app/index.js');
    const copy = copyApp({ appRoot: app, extensionsBin: bin, parent: root, code: ['dist/app'] });
    expect(existsSync(join(copy, 'dist/app/index.js'))).toBe(true);
    expect(existsSync(join(copy, 'dist/tools'))).toBe(false);
  });

  it("links no node_modules when the app's deployment carries none", () => {
    manifest('dist/app/index.js');
    const copy = copyApp({ appRoot: app, extensionsBin: bin, parent: root, code: ['dist/app'], nodeModules: false });
    expect(existsSync(join(copy, 'dist/app/index.js'))).toBe(true);
    expect(lstatOrUndefined(join(copy, 'node_modules'))).toBeUndefined();
  });

  it('refuses folders that do not hold main, and a main outside any folder', () => {
    manifest('dist/app/index.js');
    expect(() => copyApp({ appRoot: app, extensionsBin: bin, parent: root, code: ['dist/tools'] })).toThrow(/must be inside a folder/);
    manifest('index.js');
    expect(() => copyApp({ appRoot: app, extensionsBin: bin, parent: root })).toThrow(/must be inside a folder/);
  });
});
