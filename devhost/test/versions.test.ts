/**
 * The versions the devhost's parity was recorded against (devhost/docs/real-host.md#versions): pinned
 * exactly in package.json and the lockfile, stated in one line at start, and a warning when the app
 * loads another version of a library whose private protocol the devhost speaks.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { installedVersion } from '../app/loader';
import { libraries, recordedWith, versionReport } from '../versions';
import { fixture, startFixture } from './support';

const root = join(__dirname, '..', '..');

test('package.json pins both libraries exactly, at the versions parity was recorded with, and the lockfile agrees', () => {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version?: string; dependencies?: Record<string, string> }>;
  };
  for (const name of libraries) {
    const recorded = recordedWith.libraries[name];
    expect({ name, range: pkg.dependencies[name] }).toEqual({ name, range: recorded });
    expect({ name, locked: lock.packages['']?.dependencies?.[name] }).toEqual({ name, locked: recorded });
    expect({ name, installed: lock.packages[`node_modules/${name}`]?.version }).toEqual({ name, installed: recorded });
    expect({ name, resolved: installedVersion(fixture('basic'), name) }).toEqual({ name, resolved: recorded });
  }
});

test('one line names the recorded versions; a library at another version gets a warning, an absent one nothing', () => {
  const same = versionReport({ '@azure/functions': '4.16.5', 'durable-functions': '3.5.0' });
  expect(same.line).toBe(
    'Parity recorded against Functions host 4.1037.0 (Node worker 3.9.1, Durable extension 3.19.0) with @azure/functions 4.16.5 and durable-functions 3.5.0',
  );
  expect(same.warnings).toEqual([]);
  const other = versionReport({ '@azure/functions': '4.16.5', 'durable-functions': '3.6.0' });
  expect(other.warnings).toEqual([
    expect.stringMatching(/^The app loads durable-functions 3\.6\.0; the devhost's parity tests were recorded with 3\.5\.0\./),
  ]);
  expect(versionReport({ '@azure/functions': '4.16.5', 'durable-functions': undefined }).warnings).toEqual([]);
});

test('the host states the recorded versions when it starts', async () => {
  const lines: string[] = [];
  const host = await startFixture('stream', { quiet: false, log: (level, message) => lines.push(`${level}: ${message}`) });
  await host.stop();
  expect(lines.filter((l) => l.includes('Parity recorded against'))).toEqual([
    `info: ${versionReport({ '@azure/functions': '4.16.5', 'durable-functions': '3.5.0' }).line}`,
  ]);
  expect(lines.filter((l) => l.startsWith('warn: The app loads'))).toEqual([]);
});
