/**
 * The real host's assemblies precompiled (devhost/realHost/readyToRun.ts): the runtime crossgen2 must
 * compile for is the one the host rolls forward to, and a folder's managed IL assemblies come out as
 * ReadyToRun images (read from their CLI header, not from the tool's word), the rest untouched, and a
 * second folder with the same assemblies is served from the cache.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { copyHostBuild } from '../realHost/hostBuild';
import { hostRuntime, precompileFolder } from '../realHost/readyToRun';
import { describeWithTool } from '../../test/support/optionalTool';
import { realHostTool } from '../../test/support/realHostTool.cjs';

const list = (...lines: string[]): string => `${lines.join('\n')}\n`;

describe('the runtime the host rolls forward to (DOTNET_ROLL_FORWARD=Major from 8.0)', () => {
  test('8.0 when installed, at its highest patch, with the ASP.NET Core of the same band', () => {
    const found = hostRuntime(
      list(
        'Microsoft.AspNetCore.App 8.0.11 [/dn/shared/Microsoft.AspNetCore.App]',
        'Microsoft.AspNetCore.App 10.0.12 [/dn/shared/Microsoft.AspNetCore.App]',
        'Microsoft.NETCore.App 8.0.3 [/dn/shared/Microsoft.NETCore.App]',
        'Microsoft.NETCore.App 8.0.11 [/dn/shared/Microsoft.NETCore.App]',
        'Microsoft.NETCore.App 10.0.12 [/dn/shared/Microsoft.NETCore.App]',
      ),
    );
    expect(found).toEqual({
      version: '8.0.11',
      dirs: ['/dn/shared/Microsoft.NETCore.App/8.0.11', '/dn/shared/Microsoft.AspNetCore.App/8.0.11'],
    });
  });

  test('the lowest newer major when 8 is missing; nothing older than 8', () => {
    const newer = list(
      'Microsoft.NETCore.App 10.0.12 [/dn/x]',
      'Microsoft.NETCore.App 9.0.1-rc.1.2 [/dn/x]',
      'Microsoft.NETCore.App 7.0.20 [/dn/x]',
    );
    expect(hostRuntime(newer)?.version).toBe('9.0.1-rc.1.2');
    expect(hostRuntime(list('Microsoft.NETCore.App 7.0.20 [/dn/x]'))).toBeUndefined();
  });
});

/** What an assembly's CLI header says: IL only, precompiled (ReadyToRun), or no managed image at all. */
function imageKind(bytes: Buffer): 'il' | 'readyToRun' | 'none' {
  if (bytes.length < 0x40 || bytes.toString('latin1', 0, 2) !== 'MZ') return 'none';
  const pe = bytes.readUInt32LE(0x3c);
  if (bytes.toString('latin1', pe, pe + 4) !== 'PE\0\0') return 'none';
  const optional = pe + 24;
  const directories = optional + (bytes.readUInt16LE(optional) === 0x10b ? 96 : 112);
  const [cliRva, cliSize] = [bytes.readUInt32LE(directories + 14 * 8), bytes.readUInt32LE(directories + 14 * 8 + 4)];
  if (cliSize === 0) return 'none';
  const sections = optional + bytes.readUInt16LE(pe + 20);
  for (let i = 0; i < bytes.readUInt16LE(pe + 6); i++) {
    const s = sections + 40 * i;
    const [virtualSize, address, rawSize, rawAt] = [0, 4, 8, 12].map((o) => bytes.readUInt32LE(s + 8 + o)) as [
      number,
      number,
      number,
      number,
    ];
    if (cliRva < address || cliRva >= address + Math.max(virtualSize, rawSize)) continue;
    const header = rawAt + cliRva - address;
    // ECMA-335 II.25.3.3: the managed native header's directory (offset 64) is set in ReadyToRun images.
    return bytes.readUInt32LE(header + 64 + 4) !== 0 ? 'readyToRun' : 'il';
  }
  return 'none';
}

describeWithTool(realHostTool, 'precompiling a folder of assemblies', (source) => {
  let scratch: string;
  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), 'tallyho-r2r-test-'));
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  test("the host's IL assemblies become ReadyToRun images, a native file stays as it was, and the cache serves the next folder", async () => {
    const build = copyHostBuild(source, { parent: scratch });
    // The two smallest IL assemblies of the host build: the test compiles little.
    const [first, second] = readdirSync(build.dir)
      .filter((name) => name.endsWith('.dll') && imageKind(readFileSync(join(build.dir, name))) === 'il')
      .sort((a, b) => statSync(join(build.dir, a)).size - statSync(join(build.dir, b)).size);
    expect(second).toBeDefined();
    const folder = (name: string): string => {
      const dir = join(scratch, name);
      mkdirSync(dir);
      for (const dll of [first, second]) copyFileSync(join(build.dir, dll!), join(dir, dll!));
      writeFileSync(join(dir, 'native.dll'), Buffer.alloc(512, 7));
      return dir;
    };
    const cacheDir = join(scratch, 'cache');

    const one = folder('one');
    const compiled = await precompileFolder(one, { cacheDir, references: [build.dir] });
    expect(compiled).toEqual({ precompiled: 2, compiledNow: 2, leftAsIs: 1 });
    expect([first, second, 'native.dll'].map((name) => imageKind(readFileSync(join(one, name!))))).toEqual([
      'readyToRun',
      'readyToRun',
      'none',
    ]);
    expect(readFileSync(join(one, 'native.dll'))).toEqual(Buffer.alloc(512, 7));

    const two = folder('two');
    expect(await precompileFolder(two, { cacheDir, references: [build.dir] })).toEqual({ precompiled: 2, compiledNow: 0, leftAsIs: 1 });
    expect(readFileSync(join(two, first!))).toEqual(readFileSync(join(one, first!)));
  });
});
