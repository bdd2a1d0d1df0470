/**
 * A build of the real Azure Functions host (the .NET `Microsoft.Azure.WebJobs.Script.WebHost.dll`
 * with its Node.js worker), for machines without Core Tools. The build is named by the setting
 * FUNCTIONS_HOST_BUILD: a folder holding it, or a `.tar.gz` of one. It is never used where it lies:
 * the host writes its key file beside its DLLs (`Secrets/host.json`), so each run gets a private,
 * writable copy, and the keys are chosen by us (written into that file before the first start)
 * rather than read back from whatever the host generates.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const hostBuildSetting = 'FUNCTIONS_HOST_BUILD';
export const webHostDll = 'Microsoft.Azure.WebJobs.Script.WebHost.dll';

export interface RealHostKeys {
  /** The master key: the host's admin API, admin-level functions, every system route. */
  readonly master: string;
  /** The `default` function key. */
  readonly function: string;
  /** The Durable extension's system key (`durabletask_extension`): its HTTP API under /runtime/webhooks/durabletask. */
  readonly durableSystem: string;
}

export interface HostBuild {
  /** The private copy the host runs from. */
  readonly dir: string;
  readonly keys: RealHostKeys;
}

/** Where FUNCTIONS_HOST_BUILD points, when it names something that exists. */
export function configuredHostBuild(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = env[hostBuildSetting]?.trim();
  return value === undefined || value === '' || !existsSync(value) ? undefined : value;
}

/** The folder under `root` (itself or one level down, as archives often wrap it) holding the web host. */
function findHostFolder(root: string): string {
  if (existsSync(join(root, webHostDll))) return root;
  for (const entry of readdirSync(root)) {
    const candidate = join(root, entry);
    if (statSync(candidate).isDirectory() && existsSync(join(candidate, webHostDll))) return candidate;
  }
  throw new Error(`${root} holds no ${webHostDll} (${hostBuildSetting} must name a Functions host build or a .tar.gz of one)`);
}

/** A key shaped like the host's own (URL-safe base64). */
export function newHostKey(): string {
  return randomBytes(40).toString('base64url');
}

function hostSecrets(keys: RealHostKeys): string {
  const key = (name: string, value: string) => ({ name, value, encrypted: false });
  return JSON.stringify({
    masterKey: key('master', keys.master),
    functionKeys: [key('default', keys.function)],
    systemKeys: [key('durabletask_extension', keys.durableSystem)],
    instanceId: randomBytes(16).toString('hex'),
    source: 'runtime',
    decryptionKeyId: '',
  });
}

/**
 * A private copy of the host build at `source` (folder or .tar.gz) in a new folder under `parent`,
 * with `keys` (made up when not given) as its secrets. Every host started from it shares those keys.
 */
export function copyHostBuild(source: string, options: { parent?: string; keys?: RealHostKeys } = {}): HostBuild {
  const parent = options.parent ?? tmpdir();
  mkdirSync(parent, { recursive: true });
  const target = mkdtempSync(join(parent, 'functions-host-'));
  if (/\.(tar\.gz|tgz)$/i.test(source)) {
    const untar = spawnSync('tar', ['-xzf', source, '-C', target], { encoding: 'utf8' });
    if (untar.status !== 0) throw new Error(`Extracting ${source} failed: ${untar.stderr || untar.error?.message}`);
  } else {
    cpSync(findHostFolder(source), target, { recursive: true });
  }
  const dir = findHostFolder(target);
  const keys = options.keys ?? { master: newHostKey(), function: newHostKey(), durableSystem: newHostKey() };
  mkdirSync(join(dir, 'Secrets'), { recursive: true });
  writeFileSync(join(dir, 'Secrets', 'host.json'), hostSecrets(keys));
  return { dir, keys };
}
