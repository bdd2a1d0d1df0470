/**
 * The copy of an app that a real host serves. Never the app folder itself: the host watches its
 * script root and restarts its job host and worker when any file named host.json appears or changes
 * under it (seen on host 4.1037 when a test built a deployment package inside the repository), and a
 * host without the extension bundle needs a host.json that does not name one.
 *
 * The copy holds package.json, host.json without `extensionBundle`, the built code (the top folder of
 * package.json `main`, or the folders the app says it deploys), `bin/` with the built extensions, and
 * a link to the app's node_modules unless the app says its deployment has none.
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
  /**
   * The folders of built code the host serves, relative to `appRoot` (default: the top folder of
   * package.json `main`). An app whose deployment ships less than that folder names what it ships,
   * so that the host here serves what one in Azure would, and a file the deployment lacks fails here too.
   */
  readonly code?: readonly string[];
  /**
   * Whether the copy links the app's node_modules (default true, as `func start` in the app's folder
   * sees them). An app whose deployment carries no node_modules (its code bundled) says false, so
   * that a dependency left out of its bundle fails here as it would in Azure.
   */
  readonly nodeModules?: boolean;
}

/** package.json `main`, without a leading `./`. */
function mainOf(appRoot: string): string {
  const pkg = JSON.parse(readFileSync(join(appRoot, 'package.json'), 'utf8')) as { main?: unknown };
  if (typeof pkg.main !== 'string' || pkg.main === '') throw new Error(`${appRoot}/package.json has no "main"`);
  return pkg.main.replace(/^\.\//, '');
}

/** The folders to copy: `code`, or the first folder of `main` (`dist` for `dist/functions/index.js`); `main` must be inside one. */
function codeFolders(appRoot: string, code: readonly string[] | undefined): readonly string[] {
  const main = mainOf(appRoot);
  const slash = main.indexOf('/');
  const folders = code ?? (slash > 0 ? [main.slice(0, slash)] : []);
  if (!folders.some((folder) => main.startsWith(`${folder}/`))) {
    throw new Error(
      `package.json "main" (${main}) must be inside a folder of built code the host serves (${folders.join(', ') || 'none'})`,
    );
  }
  return folders;
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
  for (const folder of codeFolders(options.appRoot, options.code)) {
    cpSync(join(options.appRoot, folder), join(dir, folder), { recursive: true });
  }
  cpSync(join(options.appRoot, 'package.json'), join(dir, 'package.json'));
  writeFileSync(join(dir, 'host.json'), hostJsonWithoutBundle(readFileSync(join(options.appRoot, 'host.json'), 'utf8')));
  cpSync(options.extensionsBin, join(dir, 'bin'), { recursive: true });
  if (options.nodeModules !== false) symlinkSync(join(options.appRoot, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return dir;
}
