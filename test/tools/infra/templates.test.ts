/**
 * infra/ compiles, lints and evaluates cleanly with the real Bicep CLI: build, build-params, lint (the
 * project's config and a strict one), and `bicep snapshot` of every scenario (compile.ts). The policies
 * on what the templates deploy are in policy.test.ts.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { diagnosticsOf, runBicep } from '../../support/infra/bicepCli';
import { sampleParamEnv, scenarios, strictConfig } from '../../support/infra/compile';
import { bicepFiles, describeInfra, infraDir, repoRoot } from '../../support/infra/templates';

/** The rules the issue that introduced the strict lint names. */
const strictRulesNamed = [
  'use-recent-api-versions',
  'use-description-outputs',
  'use-description-vars',
  'use-user-defined-types',
  'no-module-name',
];

describe('Bicep sources', () => {
  it('azd reads main.bicepparam: there is no main.parameters.json, which it would silently ignore', () => {
    expect(readFileSync(join(infraDir, 'main.bicepparam'), 'utf8')).toMatch(/^using 'main\.bicep'$/m);
    expect(existsSync(join(infraDir, 'main.parameters.json'))).toBe(false);
  });

  it('use local modules only (registry modules cannot be restored offline)', () => {
    const files = bicepFiles();
    expect(files.length).toBeGreaterThanOrEqual(7);
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      expect({ file, registry: /\bmodule\s+\w+\s+'(br|ts)[:/]/.test(text) }).toEqual({ file, registry: false });
    }
  });

  it('bicepconfig.json makes the linter rules that guard secrets and hygiene errors', () => {
    const config = JSON.parse(readFileSync(join(infraDir, 'bicepconfig.json'), 'utf8')) as {
      analyzers: { core: { enabled: boolean; rules: Record<string, { level: string }> } };
    };
    expect(config.analyzers.core.enabled).toBe(true);
    const required = [
      'outputs-should-not-contain-secrets',
      'secure-secrets-in-params',
      'use-secure-value-for-secure-inputs',
      'no-hardcoded-env-urls',
      'no-unused-params',
      'no-unused-vars',
      'use-parent-property',
      'no-unnecessary-dependson',
      // Resource names What-If cannot predict make `az deployment what-if` and `azd provision --preview` guess.
      'what-if-short-circuiting',
    ];
    expect(required.filter((rule) => config.analyzers.core.rules[rule]?.level !== 'error')).toEqual([]);
  });

  it('suppresses linter advice only where bicepconfig.json says why: use-recent-api-versions on diagnosticSettings', () => {
    const config = readFileSync(join(infraDir, 'bicepconfig.json'), 'utf8');
    const suppressions = bicepFiles().flatMap((file) => {
      const lines = readFileSync(file, 'utf8').split('\n');
      return lines.flatMap((line, i) => {
        const rules = /#disable-next-line\s+(.+)$/.exec(line)?.[1]?.trim().split(/\s+/) ?? [];
        return rules.map((rule) => ({ rule, next: (lines[i + 1] ?? '').replace(/^resource \w+ '([^@']+)@.*$/, '$1') }));
      });
    });
    expect(suppressions.length).toBeGreaterThan(0);
    expect(suppressions.filter((s) => s.rule !== 'use-recent-api-versions' || s.next !== 'Microsoft.Insights/diagnosticSettings')).toEqual(
      [],
    );
    expect(config).toMatch(/use-recent-api-versions on Microsoft\.Insights\/diagnosticSettings/);
    // No file-wide switch-off either.
    expect(bicepFiles().filter((file) => /#disable-diagnostics/.test(readFileSync(file, 'utf8')))).toEqual([]);
  });
});

describeInfra('the Bicep CLI on infra/', (templates) => {
  it('build, build-params and lint report nothing (0 errors, 0 warnings) with the project config', () => {
    const { build, buildParams, lint } = templates().diagnostics;
    expect({ build, buildParams, lint }).toEqual({ build: [], buildParams: [], lint: [] });
    expect(templates().arm).toHaveProperty('resources');
  });

  it('lint reports nothing with every default-off rule turned on as a warning', () => {
    expect(templates().strictRules).toEqual(expect.arrayContaining(strictRulesNamed));
    expect(templates().diagnostics.strictLint).toEqual([]);
  });

  it('the strict lint bites: a probe breaking each rule the issue names gets a warning for each', () => {
    const probe = join(repoRoot, 'test-artifacts', 'strict-probe');
    mkdirSync(probe, { recursive: true });
    writeFileSync(join(probe, 'bicepconfig.json'), JSON.stringify(strictConfig(infraDir).config));
    writeFileSync(join(probe, 'empty.bicep'), '');
    writeFileSync(
      join(probe, 'main.bicep'),
      [
        'param location string',
        'param tags object',
        "module named 'empty.bicep' = {",
        "  name: 'named'",
        '}',
        'var count = 1',
        'output total int = count',
        "resource identity 'Microsoft.ManagedIdentity/userAssignedIdentities@2023-01-31' = {",
        "  name: 'id-probe'",
        '  location: location',
        '  tags: tags',
        '}',
        '',
      ].join('\n'),
    );
    const lint = runBicep(templates().cli, ['lint', join(probe, 'main.bicep')]);
    const rules = new Set(diagnosticsOf(lint.stderr).map((line) => /(?:Warning|Error) ([\w-]+):/.exec(line)?.[1]));
    for (const rule of strictRulesNamed) expect({ rule, flagged: rules.has(rule) }).toEqual({ rule, flagged: true });
  });

  it('the build bites: a broken template fails to compile with an error naming the line', () => {
    const broken = join(repoRoot, 'test-artifacts', 'broken.bicep');
    mkdirSync(join(repoRoot, 'test-artifacts'), { recursive: true });
    writeFileSync(broken, "resource x 'Microsoft.Web/sites@2024-04-01' = {\n  name: 'a'\n  properties: { httpsOnly: true \n");
    const build = runBicep(templates().cli, ['build', broken, '--stdout']);
    expect(build.status).not.toBe(0);
    expect(diagnosticsOf(build.stderr).filter((line) => /broken\.bicep\(\d+,\d+\) : Error /.test(line)).length).toBeGreaterThan(0);
  });

  it('every scenario evaluates cleanly (bicep snapshot) and deploys the app', () => {
    expect(templates().diagnostics.snapshot).toEqual([]);
    for (const name of Object.keys(scenarios) as (keyof typeof scenarios)[]) {
      const deployment = templates().deployments[name];
      expect({ name, sites: deployment.resources.filter((r) => r.type === 'Microsoft.Web/sites').length }).toEqual({ name, sites: 1 });
    }
  });

  it('main.bicepparam sets only parameters main.bicep declares, from the azd environment', () => {
    const text = readFileSync(join(infraDir, 'main.bicepparam'), 'utf8');
    expect(text).toMatch(/^using 'main\.bicep'$/m);
    const set = [...text.matchAll(/^param (\w+) =/gm)].map((m) => m[1]);
    const declared = new Set(Object.keys(templates().arm.parameters ?? {}));
    expect(set.filter((name) => name === undefined || !declared.has(name))).toEqual([]);
    expect(set).toEqual(expect.arrayContaining(['environmentName', 'location', 'developerPrincipalId']));
    const parameters = JSON.parse(templates().parameters) as { parameters: Record<string, { value: unknown }> };
    expect(parameters.parameters.environmentName?.value).toBe(sampleParamEnv.AZURE_ENV_NAME);
    expect(parameters.parameters.location?.value).toBe(sampleParamEnv.AZURE_LOCATION);
    expect(parameters.parameters.nodeVersion?.value).toBe('22');
  });
});
