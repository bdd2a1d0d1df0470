/**
 * Policy tests on what infra/ deploys, read from the real Bicep CLI's output: each scenario's
 * `bicep snapshot` (every resource a deployment creates, with its values) and the compiled ARM JSON
 * (compile.ts). A policy holds in every scenario: with every option at its default, all on, all off.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { sampleIds } from '../../support/infra/compile';
import { at, type Deployment, isPlainObject, ofType, type Resource, textOf } from '../../support/infra/deployment';
import { armTemplates, describeInfra, repoRoot } from '../../support/infra/templates';

/** Built-in role definitions the app may hold, and the resource type each must be scoped to. */
const allowedRoles: Readonly<Record<string, { readonly name: string; readonly scope: string }>> = {
  'b7e6dc6d-f1e8-4753-8033-0f276bb0955b': { name: 'Storage Blob Data Owner', scope: 'Microsoft.Storage/storageAccounts' },
  '974c5e8b-45b9-4653-ba55-5f855dd0fb88': { name: 'Storage Queue Data Contributor', scope: 'Microsoft.Storage/storageAccounts' },
  '0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3': { name: 'Storage Table Data Contributor', scope: 'Microsoft.Storage/storageAccounts' },
  '69a216fc-b8fb-44d8-bc22-1f3c2cd27a39': { name: 'Azure Service Bus Data Sender', scope: 'Microsoft.ServiceBus/namespaces' },
  '3913510d-42f4-4e42-8a64-420c390055eb': { name: 'Monitoring Metrics Publisher', scope: 'Microsoft.Insights/components' },
};

/** The roles the developer option grants: the app's data roles (not the telemetry publisher). */
const dataRoles = Object.keys(allowedRoles).filter((guid) => allowedRoles[guid]!.name !== 'Monitoring Metrics Publisher');

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

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

function roleGuid(resource: Resource): string | undefined {
  return /roleDefinitions\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i.exec(
    textOf(at(resource.body, 'properties.roleDefinitionId')),
  )?.[1];
}

describeInfra('policy', (templates) => {
  function each(check: (deployment: Deployment) => void): void {
    const deployments = Object.values(templates().deployments);
    expect(deployments.length).toBeGreaterThanOrEqual(3);
    for (const deployment of deployments) {
      try {
        check(deployment);
      } catch (err) {
        if (err instanceof Error) err.message = `[scenario ${deployment.scenario}] ${err.message}`;
        throw err;
      }
    }
  }

  function one(deployment: Deployment, type: string): Resource {
    const found = ofType(deployment, type);
    expect(found.map((r) => r.id)).toHaveLength(1);
    return found[0]!;
  }

  it('storage: shared keys off, TLS 1.2, no public blob access, https only, private containers', () => {
    each((deployment) => {
      const storage = one(deployment, 'Microsoft.Storage/storageAccounts');
      expect(at(storage.body, 'properties.allowSharedKeyAccess')).toBe(false);
      expect(at(storage.body, 'properties.minimumTlsVersion')).toBe('TLS1_2');
      expect(at(storage.body, 'properties.allowBlobPublicAccess')).toBe(false);
      expect(at(storage.body, 'properties.supportsHttpsTrafficOnly')).toBe(true);
      const containers = ofType(deployment, 'Microsoft.Storage/storageAccounts/blobServices/containers');
      expect(containers.length).toBeGreaterThan(1);
      for (const container of containers)
        expect({ container: container.name, access: at(container.body, 'properties.publicAccess') }).toEqual({
          container: container.name,
          access: 'None',
        });
    });
  });

  it('no keys, SAS or connection strings anywhere: no listKeys, no AccountKey/SharedAccessKey', () => {
    const texts = [
      { file: 'main.json (compiled)', text: templates().compiled },
      ...Object.entries(templates().snapshots).map(([name, text]) => ({ file: `${name}.snapshot.json`, text })),
    ];
    for (const { file, text } of texts) {
      for (const forbidden of [
        /listKeys\s*\(/i,
        /listConnectionStrings/i,
        /AccountKey\s*=/i,
        /SharedAccessKey/i,
        /listAccountSas|listServiceSas/i,
      ]) {
        expect({ file, forbidden: String(forbidden), found: forbidden.test(text) }).toEqual({
          file,
          forbidden: String(forbidden),
          found: false,
        });
      }
    }
  });

  it('outputs reveal no secret: no keys, connection strings or instrumentation keys, in any module', () => {
    const outputs = armTemplates(templates().arm).flatMap(({ path, template }) =>
      Object.entries(template.outputs ?? {}).map(([name, output]) => ({ name: `${path}:${name}`, value: JSON.stringify(output.value) })),
    );
    expect(outputs.length).toBeGreaterThan(8);
    for (const { name, value } of outputs) {
      expect({ name, suspicious: /key|secret|password|connectionstring|sas/i.test(name.split(':')[1]!) }).toEqual({
        name,
        suspicious: false,
      });
      expect({ name, value: /connectionstring|instrumentationkey|listkeys/i.test(value) }).toEqual({ name, value: false });
    }
    each((deployment) => {
      expect(Object.keys(deployment.outputs)).toEqual(
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
    each((deployment) => {
      const config = ofType(deployment, 'Microsoft.Web/sites/config').filter((c) => c.name.endsWith('/appsettings'));
      expect(config).toHaveLength(1);
      const settings = at(config[0]!.body, 'properties');
      if (!isPlainObject(settings)) throw new Error('the app settings are not an object');
      const names = Object.keys(settings);
      expect(names).not.toContain('AzureWebJobsStorage');
      expect(names).not.toContain('ServiceBusConnection');
      expect(names.filter((n) => flexForbiddenSettings.includes(n))).toEqual([]);
      // As Microsoft's Flex Consumption templates write them: the account's own endpoints carry the cloud's suffix.
      const storage = one(deployment, 'Microsoft.Storage/storageAccounts');
      for (const service of ['blob', 'queue', 'table']) {
        expect(at(settings, `AzureWebJobsStorage__${service}ServiceUri`)).toBe(
          `[reference('${storage.id}', '${storage.apiVersion}').primaryEndpoints.${service}]`,
        );
      }
      expect(names).not.toContain('AzureWebJobsStorage__accountName');
      expect(at(settings, 'AzureWebJobsStorage__credential')).toBe('managedidentity');
      expect(at(settings, 'ServiceBusConnection__credential')).toBe('managedidentity');
      const identity = one(deployment, 'Microsoft.ManagedIdentity/userAssignedIdentities');
      const clientId = new RegExp(`^\\[reference\\('${identity.id}', '[^']+'\\)\\.clientId\\]$`);
      expect(textOf(at(settings, 'AzureWebJobsStorage__clientId'))).toMatch(clientId);
      expect(textOf(at(settings, 'ServiceBusConnection__clientId'))).toMatch(clientId);
      expect(textOf(at(settings, 'APPLICATIONINSIGHTS_AUTHENTICATION_STRING'))).toMatch(/Authorization=AAD/);
      for (const [name, value] of Object.entries(settings)) {
        expect({ name, value: /AccountKey|SharedAccessKey|DefaultEndpointsProtocol/i.test(textOf(value)) }).toEqual({ name, value: false });
      }
    });
  });

  it('storage endpoints come from the account (primaryEndpoints), so sovereign clouds work', () => {
    each((deployment) => {
      const site = one(deployment, 'Microsoft.Web/sites');
      expect(textOf(at(site.body, 'properties.functionAppConfig.deployment.storage.value'))).toMatch(
        /\.primaryEndpoints\.blob, '[^']+'\)\]$/,
      );
    });
    expect(/core\.windows\.net/.test(templates().compiled)).toBe(false);
  });

  it('role assignments: known built-in roles only, each scoped to its resource, principalType always set', () => {
    each((deployment) => {
      const assignments = ofType(deployment, 'Microsoft.Authorization/roleAssignments');
      expect(assignments.length).toBeGreaterThanOrEqual(5);
      for (const assignment of assignments) {
        const guid = roleGuid(assignment);
        const where = assignment.id;
        expect({ where, known: guid !== undefined && guid.toLowerCase() in allowedRoles }).toEqual({ where, known: true });
        const role = allowedRoles[guid!.toLowerCase()]!;
        expect({ where, role: role.name, scope: assignment.scopeType }).toEqual({ where, role: role.name, scope: role.scope });
        expect({ where, principalType: at(assignment.body, 'properties.principalType') }).toEqual({
          where,
          principalType: expect.stringMatching(/^(ServicePrincipal|User|Group)$/),
        });
        expect(at(assignment.body, 'properties.roleDefinitionId')).toBe(
          `/subscriptions/${sampleIds.subscription}/providers/Microsoft.Authorization/roleDefinitions/${guid}`,
        );
      }
    });
  });

  it("the app's identity holds every role it needs, as a ServicePrincipal; a developer gets the data roles only when named", () => {
    each((deployment) => {
      const identity = one(deployment, 'Microsoft.ManagedIdentity/userAssignedIdentities');
      const assignments = ofType(deployment, 'Microsoft.Authorization/roleAssignments');
      const app = assignments.filter((a) => textOf(at(a.body, 'properties.principalId')).startsWith(`[reference('${identity.id}'`));
      expect(new Set(app.map(roleGuid))).toEqual(new Set(Object.keys(allowedRoles)));
      for (const assignment of app) expect(at(assignment.body, 'properties.principalType')).toBe('ServicePrincipal');
      const developer = assignments.filter((a) => !app.includes(a));
      const named = deployment.scenario === 'everything';
      expect(developer.map(roleGuid).sort()).toEqual(named ? [...dataRoles].sort() : []);
      for (const assignment of developer) {
        expect(at(assignment.body, 'properties.principalId')).toBe(sampleIds.developer);
        expect(at(assignment.body, 'properties.principalType')).toBe('User');
      }
    });
  });

  it('least privilege: nobody may receive from Service Bus, because the app never does', () => {
    // The app only sends (and schedules/cancels, which Send covers): no trigger, no receiver anywhere.
    const receives = ['functions', 'shared'].flatMap((dir) =>
      sourceFiles(join(repoRoot, dir)).filter((file) =>
        /createReceiver|serviceBusTrigger|app\.serviceBus/.test(readFileSync(file, 'utf8')),
      ),
    );
    expect(receives).toEqual([]);
    each((deployment) => {
      const granted = ofType(deployment, 'Microsoft.Authorization/roleAssignments').map(roleGuid);
      expect(granted).not.toContain('4f6d3b9b-027b-4f4c-9142-0e5a2a2247e0'); // Azure Service Bus Data Receiver
      expect(granted).not.toContain('090c5cfd-751d-490a-894a-3ce6f1109419'); // Azure Service Bus Data Owner
    });
  });

  it('diagnostic settings send the app, Service Bus and storage to Log Analytics', () => {
    each((deployment) => {
      const workspace = one(deployment, 'Microsoft.OperationalInsights/workspaces');
      const diagnostics = ofType(deployment, 'Microsoft.Insights/diagnosticSettings');
      expect(diagnostics.map((d) => d.scopeType).sort()).toEqual(
        [
          'Microsoft.Web/sites',
          'Microsoft.ServiceBus/namespaces',
          'Microsoft.Storage/storageAccounts',
          'Microsoft.Storage/storageAccounts/blobServices',
          'Microsoft.Storage/storageAccounts/queueServices',
          'Microsoft.Storage/storageAccounts/tableServices',
        ].sort(),
      );
      for (const d of diagnostics) expect(at(d.body, 'properties.workspaceId')).toBe(workspace.id);
    });
  });

  it('Service Bus and Application Insights have local (key) auth off; TLS 1.2', () => {
    each((deployment) => {
      const namespace = one(deployment, 'Microsoft.ServiceBus/namespaces');
      expect(at(namespace.body, 'properties.disableLocalAuth')).toBe(true);
      expect(at(namespace.body, 'properties.minimumTlsVersion')).toBe('1.2');
      const workspace = one(deployment, 'Microsoft.OperationalInsights/workspaces');
      const insights = one(deployment, 'Microsoft.Insights/components');
      expect(at(insights.body, 'properties.DisableLocalAuth')).toBe(true);
      expect(at(insights.body, 'properties.WorkspaceResourceId')).toBe(workspace.id);
      expect(at(workspace.body, 'properties.features.disableLocalAuth')).toBe(true);
    });
  });

  it('Flex Consumption (FC1) on Linux, Node runtime (22 by default), identity-based deployment storage, no CORS origin by default', () => {
    each((deployment) => {
      const plan = one(deployment, 'Microsoft.Web/serverfarms');
      expect(at(plan.body, 'sku.name')).toBe('FC1');
      expect(at(plan.body, 'sku.tier')).toBe('FlexConsumption');
      expect(at(plan.body, 'properties.reserved')).toBe(true);
      const site = one(deployment, 'Microsoft.Web/sites');
      expect(at(site.body, 'kind')).toBe('functionapp,linux');
      expect(at(site.body, 'properties.httpsOnly')).toBe(true);
      expect(at(site.body, 'properties.serverFarmId')).toBe(plan.id);
      const identity = one(deployment, 'Microsoft.ManagedIdentity/userAssignedIdentities');
      expect(at(site.body, 'identity.type')).toBe('UserAssigned');
      expect(Object.keys(at(site.body, 'identity.userAssignedIdentities') as object)).toEqual([identity.id]);
      expect(at(site.body, 'properties.siteConfig.alwaysOn')).not.toBe(true);
      expect(at(site.body, 'properties.siteConfig.minTlsVersion')).toBe('1.2');
      expect(at(site.body, 'properties.functionAppConfig.runtime')).toEqual({ name: 'node', version: '22' });
      expect(at(site.body, 'properties.functionAppConfig.deployment.storage.type')).toBe('blobContainer');
      expect(at(site.body, 'properties.functionAppConfig.deployment.storage.authentication')).toEqual({
        type: 'UserAssignedIdentity',
        userAssignedIdentityResourceId: identity.id,
      });
      // No browser origin may call the API unless the deployer lists some (corsAllowedOrigins defaults to []).
      expect(at(site.body, 'properties.siteConfig.cors')).toEqual({ allowedOrigins: [], supportCredentials: false });
    });
  });

  it('basic-auth publishing credentials are off', () => {
    each((deployment) => {
      const policies = ofType(deployment, 'Microsoft.Web/sites/basicPublishingCredentialsPolicies');
      expect(policies.map((p) => p.name.split('/').pop()).sort()).toEqual(['ftp', 'scm']);
      for (const p of policies) expect(at(p.body, 'properties.allow')).toBe(false);
    });
  });
});
