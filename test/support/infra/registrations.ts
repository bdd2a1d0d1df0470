/**
 * The functions the compiled app registers, captured the way the devhost captures them: a child
 * process installs the devhost's `@azure/functions-core` (Registry + installCoreApi) and then loads
 * `dist/functions/index.js`, so every binding's metadata (connection, queueName, …) is exactly what
 * the Functions host would receive.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Binding {
  readonly type: string;
  readonly direction?: string;
  readonly [key: string]: unknown;
}

export interface Registration {
  readonly name: string;
  readonly bindings: Readonly<Record<string, Binding>>;
}

const marker = '@@TALLYHO_REGISTRATIONS@@';

function sampleSettings(root: string): Record<string, string> {
  const file = join(root, 'local.settings.sample.json');
  if (!existsSync(file)) return {};
  return (JSON.parse(readFileSync(file, 'utf8')) as { Values?: Record<string, string> }).Values ?? {};
}

export function captureRegistrations(root: string): Registration[] {
  const coreApi = join(root, 'dist', 'devhost', 'core', 'coreApi.js');
  const entry = join(root, 'dist', 'functions', 'index.js');
  for (const file of [coreApi, entry]) {
    if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` first`);
  }
  const script = [
    `const { Registry, installCoreApi } = require(${JSON.stringify(coreApi)});`,
    'const registry = new Registry();',
    'installCoreApi(registry);',
    `require(${JSON.stringify(entry)});`,
    'const out = [...registry.functions.values()].map((f) => ({ name: f.metadata.name, bindings: f.metadata.bindings }));',
    `process.stdout.write('\\n${marker}' + JSON.stringify(out) + '\\n', () => process.exit(0));`,
  ].join('\n');
  const result = spawnSync(process.execPath, ['-e', script], {
    cwd: root,
    encoding: 'utf8',
    timeout: 30_000,
    env: { ...process.env, ...sampleSettings(root), AzureWebJobsStorage: 'UseDevelopmentStorage=true' },
  });
  const line = result.stdout.split('\n').find((l) => l.startsWith(marker));
  if (line === undefined) {
    throw new Error(`loading ${entry} under the devhost registry failed (exit ${result.status}):\n${result.stderr}`);
  }
  return JSON.parse(line.slice(marker.length)) as Registration[];
}

/** `%Name%` references in any string inside `value` (host.json, binding metadata). */
export function settingReferences(value: unknown): string[] {
  const found = new Set<string>();
  const visit = (v: unknown): void => {
    if (typeof v === 'string') for (const match of v.matchAll(/%([A-Za-z0-9_.:-]+)%/g)) found.add(match[1]!);
    else if (Array.isArray(v)) v.forEach(visit);
    else if (typeof v === 'object' && v !== null) Object.values(v).forEach(visit);
  };
  visit(value);
  return [...found].sort();
}
