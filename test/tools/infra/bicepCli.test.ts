/**
 * Where the infra tests get their Bicep CLI, and what happens without one: a laptop without dotnet
 * falls back with one notice; CI (CI=true) fails, naming the NuGet package that provides the CLI.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { bicepPackage, findBicep, missingBicepMessage } from '../../support/infra/bicepCli';
import { compiledTemplates, repoRoot } from '../../support/infra/templates';

const nowhere = join(repoRoot, 'test-artifacts', 'no-such-bicep');
/** An environment that hides every CLI: BICEP_PATH to a missing file, an empty PATH and NuGet folder. */
const hidden = { BICEP_PATH: nowhere, PATH: '', NUGET_PACKAGES: join(repoRoot, 'test-artifacts', 'empty-nuget') };

describe('Bicep CLI discovery', () => {
  it('finds the CLI in the NuGet folder .ci/run restores into, newest version first', () => {
    const packages = join(repoRoot, 'test-artifacts', 'fake-nuget');
    for (const version of ['0.9.1', '0.49.2', '0.10.0']) {
      const dir = join(packages, bicepPackage.toLowerCase(), version, 'tools');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'bicep'), '');
    }
    const cli = findBicep({ PATH: '', NUGET_PACKAGES: packages });
    expect(cli?.from).toBe('NuGet 0.49.2');
  });

  it('treats BICEP_PATH pointing nowhere as no CLI, and says where it looked and which package to restore', () => {
    expect(findBicep(hidden)).toBeUndefined();
    const message = missingBicepMessage(hidden);
    expect(message).toContain(bicepPackage);
    expect(message).toContain(nowhere);
    expect(message).toContain('dotnet restore infra/tools/bicep.csproj');
  });

  it('falls back with one notice outside CI', () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      expect(compiledTemplates({ ...hidden })).toBeUndefined();
      expect(compiledTemplates({ ...hidden })).toBeUndefined();
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0]?.[0])).toMatch(/did NOT run/);
    } finally {
      warn.mockRestore();
    }
  });

  it('fails under CI=true instead of falling back, naming the package', () => {
    expect(() => compiledTemplates({ ...hidden, CI: 'true' })).toThrow(new RegExp(`CI=true: .*${bicepPackage.replace(/\./g, '\\.')}`));
  });
});
