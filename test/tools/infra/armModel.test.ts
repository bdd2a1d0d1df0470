/**
 * The compiled-template reader, on hand-written ARM in the shapes `bicep build` emits (language
 * version 1.0 with resources as an array, 2.0 with symbolic names), so the compiled path is known to
 * work before a Bicep CLI is ever available to exercise it.
 */
import { armModel } from '../../support/infra/armModel';
import { at, Expr, ofType, textOf } from '../../support/infra/templateModel';

const roleAssignment = {
  type: 'Microsoft.Authorization/roleAssignments',
  apiVersion: '2022-04-01',
  scope: "[format('Microsoft.Storage/storageAccounts/{0}', parameters('storageAccountName'))]",
  name: "[guid(resourceId('Microsoft.Storage/storageAccounts', parameters('storageAccountName')), parameters('principalId'), variables('roles').blob)]",
  properties: {
    roleDefinitionId: "[subscriptionResourceId('Microsoft.Authorization/roleDefinitions', variables('roles').blob)]",
    principalId: "[parameters('principalId')]",
    principalType: "[parameters('principalType')]",
  },
};

const v1 = {
  $schema: 'https://schema.management.azure.com/schemas/2018-05-01/subscriptionDeploymentTemplate.json#',
  parameters: { nodeVersion: { type: 'string', defaultValue: '22' } },
  resources: [
    { type: 'Microsoft.Resources/resourceGroups', apiVersion: '2024-03-01', name: 'rg-x', location: 'x' },
    {
      type: 'Microsoft.Resources/deployments',
      apiVersion: '2022-09-01',
      name: 'app-roles',
      resourceGroup: 'rg-x',
      properties: {
        template: {
          variables: { roles: { blob: 'b7e6dc6d-f1e8-4753-8033-0f276bb0955b' } },
          resources: [
            roleAssignment,
            {
              type: 'Microsoft.Storage/storageAccounts/blobServices/containers',
              apiVersion: '2025-01-01',
              name: "[format('{0}/{1}/{2}', parameters('name'), 'default', parameters('containers')[copyIndex()])]",
              copy: { name: 'appContainers', count: "[length(parameters('containers'))]" },
              properties: { publicAccess: 'None' },
            },
            {
              type: 'Microsoft.Insights/diagnosticSettings',
              apiVersion: '2021-05-01-preview',
              scope: "[format('Microsoft.Storage/storageAccounts/{0}/blobServices/{1}', parameters('name'), 'default')]",
              name: 'to-log-analytics',
              properties: { workspaceId: "[parameters('workspaceId')]" },
            },
          ],
          outputs: { name: { type: 'string', value: "[parameters('name')]" } },
        },
      },
    },
    {
      type: 'Microsoft.Resources/deployments',
      apiVersion: '2022-09-01',
      name: 'developer-roles',
      condition: "[not(empty(parameters('developerPrincipalId')))]",
      properties: { template: { resources: [roleAssignment] } },
    },
  ],
  outputs: { FUNCTION_APP_BASE_URL: { type: 'string', value: "[format('https://{0}', reference('x').outputs.host.value)]" } },
};

const v2 = {
  languageVersion: '2.0',
  resources: {
    storage: { type: 'Microsoft.Storage/storageAccounts', apiVersion: '2025-01-01', existing: true, name: "[parameters('name')]" },
    site: {
      type: 'Microsoft.Web/sites',
      apiVersion: '2024-04-01',
      name: 'func',
      kind: 'functionapp,linux',
      properties: { httpsOnly: true },
    },
    diagnostics: { type: 'Microsoft.Insights/diagnosticSettings', apiVersion: '2021-05-01-preview', scope: 'site', name: 'd' },
    escaped: {
      type: 'Microsoft.Web/sites/config',
      apiVersion: '2024-04-01',
      name: 'func/appsettings',
      properties: { literal: '[[not an expression]' },
    },
  },
};

describe('armModel (compiled ARM JSON)', () => {
  const model = armModel(JSON.stringify(v1));

  it('reads every resource of every nested deployment, with its module path and conditions', () => {
    expect(model.resources.map((r) => `${r.path}:${r.type}`)).toEqual([
      'main:Microsoft.Resources/resourceGroups',
      'main/app-roles:Microsoft.Authorization/roleAssignments',
      'main/app-roles:Microsoft.Storage/storageAccounts/blobServices/containers',
      'main/app-roles:Microsoft.Insights/diagnosticSettings',
      'main/developer-roles:Microsoft.Authorization/roleAssignments',
    ]);
    const [app, developer] = ofType(model, 'Microsoft.Authorization/roleAssignments');
    expect([app?.conditional, developer?.conditional]).toEqual([false, true]);
    expect(ofType(model, 'Microsoft.Storage/storageAccounts/blobServices/containers')[0]?.loop).toBe(true);
  });

  it('inlines literal variables into expressions and names the type a scope points at', () => {
    const [assignment] = ofType(model, 'Microsoft.Authorization/roleAssignments');
    expect(textOf(at(assignment!.body, 'properties.roleDefinitionId'))).toBe(
      "subscriptionResourceId('Microsoft.Authorization/roleDefinitions', 'b7e6dc6d-f1e8-4753-8033-0f276bb0955b')",
    );
    expect(at(assignment!.body, 'properties.principalType')).toBeInstanceOf(Expr);
    expect(assignment!.scopeType).toBe('Microsoft.Storage/storageAccounts');
    expect(ofType(model, 'Microsoft.Insights/diagnosticSettings')[0]?.scopeType).toBe('Microsoft.Storage/storageAccounts/blobServices');
  });

  it('reads parameters with defaults and outputs at every level', () => {
    expect(model.params).toEqual([{ path: 'main', name: 'nodeVersion', defaultValue: '22' }]);
    expect(model.outputs.map((o) => `${o.path}:${o.name}`)).toEqual(['main:FUNCTION_APP_BASE_URL', 'main/app-roles:name']);
  });

  it('reads language version 2.0: symbolic names, existing resources, escaped literals', () => {
    const symbolic = armModel(JSON.stringify(v2));
    expect(ofType(symbolic, 'Microsoft.Storage/storageAccounts', { existing: true })).toHaveLength(1);
    expect(ofType(symbolic, 'Microsoft.Storage/storageAccounts', { existing: false })).toHaveLength(0);
    expect(ofType(symbolic, 'Microsoft.Insights/diagnosticSettings')[0]?.scopeType).toBe('Microsoft.Web/sites');
    expect(at(ofType(symbolic, 'Microsoft.Web/sites')[0]!.body, 'PROPERTIES.HTTPSONLY')).toBe(true);
    expect(at(ofType(symbolic, 'Microsoft.Web/sites/config')[0]!.body, 'properties.literal')).toBe('[not an expression]');
  });
  it("reads a module call in main's terms: arguments inlined, union(createObject) as an object, loops inherited", () => {
    const compiled = {
      languageVersion: '2.0',
      variables: { names: { storage: "[format('st{0}', parameters('env'))]" } },
      resources: {
        app: {
          type: 'Microsoft.Resources/deployments',
          apiVersion: '2025-04-01',
          name: "[format('app-{0}', uniqueString('app', deployment().name))]",
          properties: {
            parameters: { account: { value: "[variables('names').storage]" }, kind: { value: 'ServicePrincipal' } },
            template: {
              resources: {
                settings: {
                  type: 'Microsoft.Web/sites/config',
                  apiVersion: '2025-03-01',
                  name: 'func/appsettings',
                  properties:
                    "[union(parameters('extra'), createObject('A__credential', 'managedidentity', 'A__uri', parameters('account'), 'Quote', 'it''s'))]",
                },
                role: {
                  type: 'Microsoft.Authorization/roleAssignments',
                  apiVersion: '2022-04-01',
                  scope: "[resourceId('Microsoft.Storage/storageAccounts/blobServices', parameters('account'), 'default')]",
                  name: "[guid(parameters('account'), 'r')]",
                  properties: { principalType: "[parameters('kind')]" },
                },
              },
            },
          },
        },
        topics: {
          type: 'Microsoft.Resources/deployments',
          apiVersion: '2025-04-01',
          copy: { name: 'topics', count: 2 },
          name: 'topics',
          properties: {
            template: { resources: { topic: { type: 'Microsoft.ServiceBus/namespaces/topics', apiVersion: '2026-01-01', name: 't' } } },
          },
        },
      },
    };
    const view = armModel(JSON.stringify(compiled));
    expect(view.resources.map((r) => r.path)).toEqual(['main/app', 'main/app', 'main/topics']);
    const settings = ofType(view, 'Microsoft.Web/sites/config')[0]!;
    expect(at(settings.body, 'properties.A__credential')).toBe('managedidentity');
    expect(textOf(at(settings.body, 'properties.A__uri'))).toBe("format('st{0}', parameters('env'))");
    expect(at(settings.body, 'properties.Quote')).toBe("it's");
    const role = ofType(view, 'Microsoft.Authorization/roleAssignments')[0]!;
    expect(at(role.body, 'properties.principalType')).toBe('ServicePrincipal');
    expect(textOf(at(role.body, 'name'))).toBe("guid(format('st{0}', parameters('env')), 'r')");
    expect(role.scopeType).toBe('Microsoft.Storage/storageAccounts/blobServices');
    expect(ofType(view, 'Microsoft.ServiceBus/namespaces/topics')[0]?.loop).toBe(true);
  });
});
