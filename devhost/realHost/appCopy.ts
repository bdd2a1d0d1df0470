/**
 * The copy of an app that a real host serves. Never the app folder itself: the host watches its
 * script root and restarts its job host and worker when any file named host.json appears or changes
 * under it (seen on host 4.1037 when a test built a deployment package inside the repository), and a
 * host without the extension bundle needs a host.json that does not name one.
 *
 * The copy holds package.json, host.json without `extensionBundle`, the built code (the top folder of
 * package.json `main`, as a deployment package does), `bin/` with the built extensions, and a link to
 * the app's node_modules.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface AppCopyOptions {
  /** The app: package.json, host.json, node_modules and the built code. */
  readonly appRoot: string;
  /** The built extensions (`buildExtensions`). */
  readonly extensionsBin: string;
  readonly parent?: string;
}

/** The first folder of package.json `main` (`dist` for `dist/functions/index.js`). */
function codeFolder(appRoot: string): string {
  const pkg = JSON.parse(readFileSync(join(appRoot, 'package.json'), 'utf8')) as { main?: unknown };
  if (typeof pkg.main !== 'string' || pkg.main === '') throw new Error(`${appRoot}/package.json has no "main"`);
  const first = pkg.main.replace(/^\.\//, '').split('/')[0];
  if (first === undefined || first === pkg.main) throw new Error(`package.json "main" (${pkg.main}) must be inside a folder of built code`);
  return first;
}

/** host.json as a host without the bundle needs it. */
function hostJsonWithoutBundle(text: string): string {
  const parsed = JSON.parse(text) as Record<string, unknown>;
  delete parsed.extensionBundle;
  return `${JSON.stringify(parsed, null, 2)}\n`;
}

export function copyApp(options: AppCopyOptions): string {
  const parent = options.parent ?? tmpdir();
  mkdirSync(parent, { recursive: true });
  const dir = mkdtempSync(join(parent, 'functions-app-'));
  const code = codeFolder(options.appRoot);
  cpSync(join(options.appRoot, code), join(dir, code), { recursive: true });
  cpSync(join(options.appRoot, 'package.json'), join(dir, 'package.json'));
  writeFileSync(join(dir, 'host.json'), hostJsonWithoutBundle(readFileSync(join(options.appRoot, 'host.json'), 'utf8')));
  cpSync(options.extensionsBin, join(dir, 'bin'), { recursive: true });
  symlinkSync(join(options.appRoot, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return dir;
}
