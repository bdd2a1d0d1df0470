/**
 * Where the infra tests get their Bicep CLI, and what happens without one: outside CI they are
 * skipped with the project's one-line notice naming the NuGet package that provides the CLI; under
 * CI=true that is a failure. Also the snapshot reader's id parsing, on hand-written ids.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { bicepPackage, findBicep, howToGetBicep } from '../../support/infra/bicepCli';
import { deploymentOf, scopeOfId, typeOfId } from '../../support/infra/deployment';
import { bicepTool, repoRoot } from '../../support/infra/templates';
import { optionalTool } from '../../support/optionalTool';

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
    const message = howToGetBicep(hidden);
    expect(message).toContain(bicepPackage);
    expect(message).toContain(nowhere);
    expect(message).toContain('dotnet restore infra/tools/bicep.csproj');
  });

  it('skips the infra tests with one loud line outside CI', () => {
    const write = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const tool = { ...bicepTool(hidden), name: 'the Bicep CLI (hidden for this test)' };
      expect(optionalTool(tool, {})).toBeUndefined();
      expect(optionalTool(tool, {})).toBeUndefined();
      const lines = write.mock.calls.map((call) => String(call[0]));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^\nSKIPPED the infra tests .*: the Bicep CLI \(hidden for this test\) was not found\. To run them: .*Azure\.Bicep\.CommandLine/,
      );
    } finally {
      write.mockRestore();
    }
  });

  it('fails under CI=true instead of skipping, naming the package', () => {
    expect(() => optionalTool(bicepTool(hidden), { CI: 'true' })).toThrow(
      new RegExp(`required when CI=true .*${bicepPackage.replace(/\./g, '\\.')}`),
    );
  });
});

describe('the snapshot reader', () => {
  const group = '/subscriptions/s/resourceGroups/rg';

  it('reads the type of a resource id, nested or extension', () => {
    expect(typeOfId(group)).toBe('Microsoft.Resources/resourceGroups');
    expect(typeOfId(`${group}/providers/Microsoft.Storage/storageAccounts/st/blobServices/default/containers/jobs`)).toBe(
      'Microsoft.Storage/storageAccounts/blobServices/containers',
    );
    const assignment = `${group}/providers/Microsoft.ServiceBus/namespaces/sb/providers/Microsoft.Authorization/roleAssignments/g`;
    expect(typeOfId(assignment)).toBe('Microsoft.Authorization/roleAssignments');
    expect(scopeOfId(assignment)).toBe(`${group}/providers/Microsoft.ServiceBus/namespaces/sb`);
    expect(scopeOfId(`${group}/providers/Microsoft.Web/sites/func`)).toBeUndefined();
  });

  it('gives each predicted resource its scope and body', () => {
    const id = `${group}/providers/Microsoft.Web/sites/func/providers/Microsoft.Insights/diagnosticSettings/d`;
    const deployment = deploymentOf(
      'probe',
      JSON.stringify({
        predictedResources: [{ id, type: 'Microsoft.Insights/diagnosticSettings', name: 'd', apiVersion: 'v', properties: { a: 1 } }],
        outputs: { X: 'y' },
      }),
    );
    expect(deployment.resources).toEqual([
      expect.objectContaining({ id, name: 'd', scope: `${group}/providers/Microsoft.Web/sites/func`, scopeType: 'Microsoft.Web/sites' }),
    ]);
    expect(deployment.outputs).toEqual({ X: 'y' });
  });
});
