/**
 * Policy tests on the infrastructure templates. They run on the model read from the Bicep sources
 * and, when a Bicep CLI is available, also on the compiled ARM JSON (after a clean compile and lint).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { bicepParser, syntaxErrors } from '../../support/infra/bicepModel';
import { diagnosticsOf, runBicep } from '../../support/infra/bicepCli';
import { sampleParamEnv, strictConfig } from '../../support/infra/compile';
import { at, Expr, isPlainObject, ofType, type ResourceView, type TemplateModel, textOf } from '../../support/infra/templateModel';
import { bicepFiles, infraDir, loadTemplates, repoRoot, type Templates } from '../../support/infra/templates';

/** Built-in role definitions the app may hold, and the resource type each must be scoped to. */
const allowedRoles: Readonly<Record<string, { readonly name: string; readonly scope: string }>> = {
  'b7e6dc6d-f1e8-4753-8033-0f276bb0955b': { name: 'Storage Blob Data Owner', scope: 'Microsoft.Storage/storageAccounts' },
  '974c5e8b-45b9-4653-ba55-5f855dd0fb88': { name: 'Storage Queue Data Contributor', scope: 'Microsoft.Storage/storageAccounts' },
  '0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3': { name: 'Storage Table Data Contributor', scope: 'Microsoft.Storage/storageAccounts' },
  '69a216fc-b8fb-44d8-bc22-1f3c2cd27a39': { name: 'Azure Service Bus Data Sender', scope: 'Microsoft.ServiceBus/namespaces' },
  '3913510d-42f4-4e42-8a64-420c390055eb': { name: 'Monitoring Metrics Publisher', scope: 'Microsoft.Insights/components' },
};

/** App settings Flex Consumption rejects or ignores (the runtime lives in functionAppConfig). */
const flexForbiddenSettings = [
  'FUNCTIONS_WORKER_RUNTIME',
  'FUNCTIONS_EXTENSION_VERSION',
  'WEBSITE_RUN_FROM_PACKAGE',
  'WEBSITE_CONTENTSHARE',
  'WEBSITE_CONTENTAZUREFILECONNECTIONSTRING',
  'SCM_DO_BUILD_DURING_DEPLOYMENT',
  'ENABLE_ORYX_BUILD',
  'WEBSITE_NODE_DEFAULT_VERSION',
];

let templates: Templates;

beforeAll(async () => {
  templates = await loadTemplates();
  // The run's first compile (four Bicep CLI runs) took 80 s on a busy 2-core machine; later files reuse it.
}, 600_000);

function each(check: (model: TemplateModel) => void): void {
  for (const model of templates.models) {
    try {
      check(model);
    } catch (err) {
      if (err instanceof Error) err.message = `[${model.source} model] ${err.message}`;
      throw err;
    }
  }
}

function one(model: TemplateModel, type: string): ResourceView {
  const found = ofType(model, type, { existing: false });
  expect(found.map((r) => `${r.path}:${r.symbol}`)).toHaveLength(1);
  return found[0]!;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

function roleGuid(resource: ResourceView): string | undefined {
  return /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i.exec(
    textOf(at(resource.body, 'properties.roleDefinitionId')),
  )?.[0];
}

describe('Bicep sources', () => {
  it('parse without syntax errors (tree-sitter-bicep)', async () => {
    const parser = await bicepParser();
    const files = bicepFiles();
    expect(files.length).toBeGreaterThanOrEqual(7);
    expect(files.flatMap((file) => syntaxErrors(parser, file))).toEqual([]);
  });

  it('tree-sitter catches a broken template (the syntax check is real)', async () => {
    const parser = await bicepParser();
    const broken = join(repoRoot, 'test-artifacts', 'broken.bicep');
    mkdirSync(join(repoRoot, 'test-artifacts'), { recursive: true });
    writeFileSync(broken, "resource x 'Microsoft.Web/sites@2024-04-01' = {\n  name: 'a'\n  properties: { httpsOnly: true \n");
    expect(syntaxErrors(parser, broken).length).toBeGreaterThan(0);
  });

  it('use local modules only (registry modules cannot be restored offline)', () => {
    for (const file of bicepFiles()) {
      const text = readFileSync(file, 'utf8');
      expect({ file, registry: /\bmodule\s+\w+\s+'(br|ts)[:/]/.test(text) }).toEqual({ file, registry: false });
    }
  });

  it('build, build-params and lint report nothing (0 errors, 0 warnings) with the project config', () => {
    if (templates.compiled === undefined) {
      console.warn('SKIPPED: bicep build / build-params / lint (no Bicep CLI found); see the notice above.');
      return;
    }
    const { build, buildParams, lint } = templates.compiled.diagnostics;
    expect({ build, buildParams, lint }).toEqual({ build: [], buildParams: [], lint: [] });
    expect(JSON.parse(templates.compiled.compiled)).toHaveProperty('resources');
  });

  it('lint reports nothing with every default-off rule turned on as a warning', () => {
    if (templates.compiled === undefined) {
      console.warn('SKIPPED: strict bicep lint (no Bicep CLI found); see the notice above.');
      return;
    }
    expect(templates.compiled.strictRules).toEqual(
      expect.arrayContaining([
        'use-recent-api-versions',
        'use-description-outputs',
        'use-description-vars',
        'use-user-defined-types',
        'no-module-name',
      ]),
    );
    expect(templates.compiled.diagnostics.strictLint).toEqual([]);
  });

  it('the strict lint bites: a probe breaking each rule the issue names gets a warning for each', () => {
    if (templates.compiled === undefined) {
      console.warn('SKIPPED: strict lint probe (no Bicep CLI found); see the notice above.');
      return;
    }
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
    const lint = runBicep(templates.compiled.cli, ['lint', join(probe, 'main.bicep')]);
    const rules = new Set(diagnosticsOf(lint.stderr).map((line) => /(?:Warning|Error) ([\w-]+):/.exec(line)?.[1]));
    for (const rule of [
      'use-recent-api-versions',
      'use-description-outputs',
      'use-description-vars',
      'use-user-defined-types',
      'no-module-name',
    ]) {
      expect({ rule, flagged: rules.has(rule) }).toEqual({ rule, flagged: true });
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

  it('main.bicepparam sets only parameters main.bicep declares, from the azd environment', () => {
    const text = readFileSync(join(infraDir, 'main.bicepparam'), 'utf8');
    expect(text).toMatch(/^using 'main\.bicep'$/m);
    const set = [...text.matchAll(/^param (\w+) =/gm)].map((m) => m[1]);
    const declared = new Set(templates.bicep.params.filter((p) => p.path === 'main').map((p) => p.name));
    expect(set.filter((name) => name === undefined || !declared.has(name))).toEqual([]);
    expect(set).toEqual(expect.arrayContaining(['environmentName', 'location', 'developerPrincipalId']));
    // azd prefers main.bicepparam; a second parameters file would be silently ignored.
    expect(existsSync(join(infraDir, 'main.parameters.json'))).toBe(false);
    if (templates.compiled === undefined) return;
    const parameters = JSON.parse(templates.compiled.parameters) as { parameters: Record<string, { value: unknown }> };
    expect(parameters.parameters.environmentName?.value).toBe(sampleParamEnv.AZURE_ENV_NAME);
    expect(parameters.parameters.location?.value).toBe(sampleParamEnv.AZURE_LOCATION);
    expect(parameters.parameters.nodeVersion?.value).toBe('22');
  });
});

describe('policy', () => {
  it('storage: shared keys off, TLS 1.2, no public blob access, https only, private containers', () => {
    each((model) => {
      const storage = one(model, 'Microsoft.Storage/storageAccounts');
      expect(at(storage.body, 'properties.allowSharedKeyAccess')).toBe(false);
      expect(at(storage.body, 'properties.minimumTlsVersion')).toBe('TLS1_2');
      expect(at(storage.body, 'properties.allowBlobPublicAccess')).toBe(false);
      expect(at(storage.body, 'properties.supportsHttpsTrafficOnly')).toBe(true);
      for (const container of ofType(model, 'Microsoft.Storage/storageAccounts/blobServices/containers')) {
        expect(at(container.body, 'properties.publicAccess')).toBe('None');
      }
    });
  });

  it('no keys, SAS or connection strings anywhere: no listKeys, no AccountKey/SharedAccessKey', () => {
    each((model) => {
      for (const { file, text } of model.texts) {
        const withoutComments = file.endsWith('.bicep') ? text.replace(/\/\/.*$/gm, '') : text;
        for (const forbidden of [
          /listKeys\s*\(/i,
          /listConnectionStrings/i,
          /AccountKey\s*=/i,
          /SharedAccessKey/i,
          /listAccountSas|listServiceSas/i,
        ]) {
          expect({ file, forbidden: String(forbidden), found: forbidden.test(withoutComments) }).toEqual({
            file,
            forbidden: String(forbidden),
            found: false,
          });
        }
      }
    });
  });

  it('outputs reveal no secret: no keys, connection strings or instrumentation keys', () => {
    each((model) => {
      for (const output of model.outputs) {
        expect({ output: output.name, suspicious: /key|secret|password|connectionstring|sas/i.test(output.name) }).toEqual({
          output: output.name,
          suspicious: false,
        });
        expect({ output: output.name, value: /connectionstring|instrumentationkey|listkeys/i.test(textOf(output.value)) }).toEqual({
          output: output.name,
          value: false,
        });
      }
      const names = model.outputs.filter((o) => o.path === 'main').map((o) => o.name);
      expect(names).toEqual(
        expect.arrayContaining([
          'FUNCTION_APP_NAME',
          'FUNCTION_APP_BASE_URL',
          'STORAGE_ACCOUNT_NAME',
          'SERVICE_BUS_NAMESPACE',
          'AZURE_RESOURCE_GROUP',
        ]),
      );
    });
  });

  it('app settings: identity-based connections only, storage by its own service URIs, nothing Flex Consumption rejects', () => {
    // The compiled template builds them as union(appSettings, createObject(...)): its known part is checked.
    each((model) => {
      const config = ofType(model, 'Microsoft.Web/sites/config').filter((c) => /appsettings/.test(textOf(at(c.body, 'name'))));
      expect(config).toHaveLength(1);
      const settings = at(config[0]!.body, 'properties');
      expect(isPlainObject(settings)).toBe(true);
      const names = Object.keys(settings as object);
      expect(names).not.toContain('AzureWebJobsStorage');
      expect(names).not.toContain('ServiceBusConnection');
      expect(names.filter((n) => flexForbiddenSettings.includes(n))).toEqual([]);
      // As Microsoft's Flex Consumption templates write them; the account's endpoints carry the cloud's suffix.
      for (const service of ['blob', 'queue', 'table']) {
        expect(textOf(at(settings, `AzureWebJobsStorage__${service}ServiceUri`))).toMatch(
          new RegExp(`[eE]ndpoints'?\\)?(\\.value)?\\.${service}$`),
        );
      }
      expect(names).not.toContain('AzureWebJobsStorage__accountName');
      expect(at(settings, 'AzureWebJobsStorage__credential')).toBe('managedidentity');
      expect(at(settings, 'ServiceBusConnection__credential')).toBe('managedidentity');
      expect(textOf(at(settings, 'AzureWebJobsStorage__clientId'))).toMatch(/[cC]lientId/);
      expect(textOf(at(settings, 'ServiceBusConnection__clientId'))).toMatch(/[cC]lientId/);
      expect(textOf(at(settings, 'APPLICATIONINSIGHTS_AUTHENTICATION_STRING'))).toMatch(/Authorization=AAD/);
      for (const [name, value] of Object.entries(settings as object)) {
        expect({ name, value: /AccountKey|SharedAccessKey|DefaultEndpointsProtocol/i.test(textOf(value as Expr)) }).toEqual({
          name,
          value: false,
        });
      }
    });
  });

  it('storage endpoints come from the account (primaryEndpoints), so sovereign clouds work', () => {
    each((model) => {
      const endpoints = model.outputs.find((o) => o.name === 'endpoints');
      for (const service of ['blob', 'queue', 'table']) {
        expect(textOf(at(endpoints?.value, service))).toMatch(new RegExp(`primaryEndpoints\\.${service}$`));
      }
      for (const { file, text } of model.texts)
        expect({ file, publicCloudHost: /core\.windows\.net/.test(text) }).toEqual({ file, publicCloudHost: false });
    });
  });

  it('role assignments: known built-in roles only, each scoped to its resource, principalType always set', () => {
    each((model) => {
      const assignments = ofType(model, 'Microsoft.Authorization/roleAssignments');
      expect(assignments.length).toBeGreaterThanOrEqual(6);
      for (const assignment of assignments) {
        const guid = roleGuid(assignment);
        const where = `${assignment.path}:${assignment.symbol}`;
        expect({ where, known: guid !== undefined && guid.toLowerCase() in allowedRoles }).toEqual({ where, known: true });
        const role = allowedRoles[guid!.toLowerCase()]!;
        expect({ where, role: role.name, scope: assignment.scopeType }).toEqual({ where, role: role.name, scope: role.scope });
        const principalType = at(assignment.body, 'properties.principalType');
        expect({ where, principalType: principalType !== undefined && principalType !== '' }).toEqual({ where, principalType: true });
        expect(textOf(at(assignment.body, 'properties.roleDefinitionId'))).toMatch(
          /subscriptionResourceId\('Microsoft\.Authorization\/roleDefinitions'/,
        );
      }
    });
  });

  it("the app's identity holds every data role it needs, as a ServicePrincipal; the developer's roles are optional", () => {
    each((model) => {
      const unconditional = ofType(model, 'Microsoft.Authorization/roleAssignments').filter((a) => !a.conditional);
      expect(new Set(unconditional.map(roleGuid))).toEqual(new Set(Object.keys(allowedRoles)));
      for (const assignment of unconditional) expect(textOf(at(assignment.body, 'properties.principalType'))).toMatch(/ServicePrincipal/);
      const developer = ofType(model, 'Microsoft.Authorization/roleAssignments').filter((a) => a.conditional);
      expect(developer.map(roleGuid).sort()).toEqual(
        unconditional
          .filter((a) => a.path.endsWith('appRoles'))
          .map(roleGuid)
          .sort(),
      );
    });
    // ServicePrincipal reaches the app's assignments through a module parameter, which the source model resolves.
    const app = ofType(templates.bicep, 'Microsoft.Authorization/roleAssignments').filter((a) => !a.conditional);
    for (const assignment of app) expect(at(assignment.body, 'properties.principalType')).toBe('ServicePrincipal');
  });

  it('least privilege: nobody may receive from Service Bus, because the app never does', () => {
    // The app only sends (and schedules/cancels, which Send covers): no trigger, no receiver anywhere.
    const receives = ['functions', 'shared'].flatMap((dir) =>
      sourceFiles(join(repoRoot, dir)).filter((file) =>
        /createReceiver|serviceBusTrigger|app\.serviceBus/.test(readFileSync(file, 'utf8')),
      ),
    );
    expect(receives).toEqual([]);
    each((model) => {
      const granted = ofType(model, 'Microsoft.Authorization/roleAssignments').map(roleGuid);
      expect(granted).not.toContain('4f6d3b9b-027b-4f4c-9142-0e5a2a2247e0'); // Azure Service Bus Data Receiver
      expect(granted).not.toContain('090c5cfd-751d-490a-894a-3ce6f1109419'); // Azure Service Bus Data Owner
    });
  });

  it('diagnostic settings send the app, Service Bus and storage to Log Analytics', () => {
    each((model) => {
      const diagnostics = ofType(model, 'Microsoft.Insights/diagnosticSettings');
      const scopes = diagnostics.map((d) => d.scopeType);
      expect(scopes).toEqual(
        expect.arrayContaining([
          'Microsoft.Web/sites',
          'Microsoft.ServiceBus/namespaces',
          'Microsoft.Storage/storageAccounts',
          'Microsoft.Storage/storageAccounts/blobServices',
          'Microsoft.Storage/storageAccounts/queueServices',
          'Microsoft.Storage/storageAccounts/tableServices',
        ]),
      );
      for (const d of diagnostics) expect(textOf(at(d.body, 'properties.workspaceId'))).not.toBe('');
    });
  });

  it('Service Bus and Application Insights have local (key) auth off; TLS 1.2', () => {
    each((model) => {
      const namespace = one(model, 'Microsoft.ServiceBus/namespaces');
      expect(at(namespace.body, 'properties.disableLocalAuth')).toBe(true);
      expect(at(namespace.body, 'properties.minimumTlsVersion')).toBe('1.2');
      const insights = one(model, 'Microsoft.Insights/components');
      expect(at(insights.body, 'properties.DisableLocalAuth')).toBe(true);
      expect(textOf(at(insights.body, 'properties.WorkspaceResourceId'))).not.toBe('');
      expect(at(one(model, 'Microsoft.OperationalInsights/workspaces').body, 'properties.features.disableLocalAuth')).toBe(true);
    });
  });

  it('Flex Consumption (FC1) on Linux, Node runtime (22 by default), identity-based deployment storage', () => {
    each((model) => {
      const plan = one(model, 'Microsoft.Web/serverfarms');
      expect(at(plan.body, 'sku.name')).toBe('FC1');
      expect(at(plan.body, 'sku.tier')).toBe('FlexConsumption');
      expect(at(plan.body, 'properties.reserved')).toBe(true);
      const site = one(model, 'Microsoft.Web/sites');
      expect(at(site.body, 'kind')).toBe('functionapp,linux');
      expect(at(site.body, 'properties.httpsOnly')).toBe(true);
      expect(at(site.body, 'identity.type')).toBe('UserAssigned');
      expect(at(site.body, 'properties.siteConfig.alwaysOn')).not.toBe(true);
      expect(at(site.body, 'properties.siteConfig.minTlsVersion')).toBe('1.2');
      expect(at(site.body, 'properties.functionAppConfig.runtime.name')).toBe('node');
      expect(at(site.body, 'properties.functionAppConfig.deployment.storage.type')).toBe('blobContainer');
      expect(at(site.body, 'properties.functionAppConfig.deployment.storage.authentication.type')).toBe('UserAssignedIdentity');
      expect(at(site.body, 'properties.siteConfig.cors.supportCredentials')).toBe(false);
      expect(ofType(model, 'Microsoft.ManagedIdentity/userAssignedIdentities', { existing: false })).toHaveLength(1);
    });
    const site = one(templates.bicep, 'Microsoft.Web/sites');
    expect(at(site.body, 'properties.functionAppConfig.runtime.version')).toBe('22');
    // No browser origin may call the API unless the deployer lists some (corsAllowedOrigins defaults to []).
    expect(at(site.body, 'properties.siteConfig.cors.allowedOrigins')).toEqual([]);
    const nodeVersion = templates.bicep.params.find((p) => p.path === 'main' && p.name === 'nodeVersion');
    expect(nodeVersion?.defaultValue).toBe('22');
  });

  it('basic-auth publishing credentials are off; App Service authentication only when asked for', () => {
    each((model) => {
      const policies = ofType(model, 'Microsoft.Web/sites/basicPublishingCredentialsPolicies');
      expect(policies).toHaveLength(2);
      for (const p of policies) expect(at(p.body, 'properties.allow')).toBe(false);
    });
    each((model) => {
      const auth = ofType(model, 'Microsoft.Web/sites/config').filter((c) => /authsettingsV2/.test(textOf(at(c.body, 'name'))));
      expect(auth).toHaveLength(1);
      expect(auth[0]!.conditional).toBe(true);
      expect(at(auth[0]!.body, 'properties.globalValidation.requireAuthentication')).toBe(true);
    });
  });

  it('the model is not vacuous: a template without the policy fails the same checks', () => {
    // Guards the guards: the source model must really see properties, not just types.
    const storage = one(templates.bicep, 'Microsoft.Storage/storageAccounts');
    expect(at(storage.body, 'properties.allowSharedKeyAccess')).not.toBeInstanceOf(Expr);
    expect(at({ properties: { allowSharedKeyAccess: true } }, 'properties.allowSharedKeyAccess')).not.toBe(false);
  });
});
