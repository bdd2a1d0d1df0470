// Tallyho in Azure: a Flex Consumption Function App (Linux, Node) with one user-assigned managed
// identity, storage with shared keys off, Service Bus with local auth off, Application Insights on
// Log Analytics, diagnostic settings and least-privilege data roles. No keys or connection strings.
//
// Deploy: `npm run deploy -- --env <name> --location <region>` (az CLI) or `azd up`; see README.
// Local modules only: registry (br/public:) modules cannot be restored offline.
targetScope = 'subscription'

import { settingSet, tagSet } from 'modules/types.bicep'

metadata description = 'Tallyho coordination primitives on Azure Functions Flex Consumption.'

@minLength(1)
@maxLength(64)
@description('Environment name (the azd environment); part of every resource name and the azd-env-name tag.')
param environmentName string

@minLength(1)
@description('Region for every resource; it must offer Flex Consumption (az functionapp list-flexconsumption-locations).')
@metadata({ azd: { type: 'location' } })
param location string

@description('Resource group to create (or reuse). Empty: rg-<environmentName>.')
param resourceGroupName string = ''

@description('Node.js version of the Functions runtime.')
@allowed([
  '20'
  '22'
])
param nodeVersion string = '22'

@description('Most instances the app scales out to (Flex Consumption allows 40 to 1000).')
@minValue(40)
@maxValue(1000)
param maximumInstanceCount int = 100

@description('Memory per instance, in MB; billing is per GB-second of it.')
@allowed([
  512
  2048
  4096
])
param instanceMemoryMB int = 2048

@description('Browser origins allowed to call the API (CORS), e.g. ["https://app.contoso.com"]. Empty: none.')
param corsAllowedOrigins string[] = []

@description('Object id of a developer (or CI principal) to get the same storage and Service Bus data roles as the app, to run it locally against these resources. Empty: nobody.')
param developerPrincipalId string = ''

@description('Kind of that principal.')
@allowed([
  'User'
  'ServicePrincipal'
  'Group'
])
param developerPrincipalType string = 'User'

@description('Who opens the door (docs/security.md): keys (function and admin keys; the default), entra (Microsoft Entra ID tokens or Tallyho credentials, checked by the app; keys open nothing) or keys+entra (keys open the door, an Entra token names the caller). The entra modes also turn on App Service authentication.')
@allowed([
  'keys'
  'entra'
  'keys+entra'
])
param authMode string = 'keys'

@description('Application (client) id of the Entra app registration whose tokens the app accepts (scripts/deploy.sh creates it: docs/deployment.md). Required unless authMode is keys.')
param entraClientId string = ''

@description('Directory (tenant) id of that registration. Default: the deploying tenant.')
param entraTenantId string = tenant().tenantId

@description('Extra app settings, merged over infra/app-settings.json (not for secrets).')
param extraAppSettings settingSet = {}

@description('Send per-request storage logs to Log Analytics (metrics are always sent).')
param storageDataLogs bool = false

@description('Days Log Analytics keeps data.')
@minValue(30)
@maxValue(730)
param logRetentionDays int = 30

@description('Create the alert rules and the workbook on the app\'s metrics (docs/operations.md#alerts).')
param alertsEnabled bool = true

@description('Resource id of an existing action group the alerts notify (email, webhook, ...). Empty: alerts show in the portal only.')
param alertActionGroupId string = ''

@description('Tags for every resource (azd-env-name is added).')
param tags tagSet = {}

@description('Tables, queues, containers and Service Bus entities the app names; generated from shared/resources.ts by `npm run infra:sync` (a test keeps the two equal).')
var appResources = loadJsonContent('app-resources.json')

@description('TALLYHO_* settings whose Azure value differs from the app\'s default, and the host settings the app\'s limits decide; tests check both.')
var appSettingsFile = loadJsonContent('app-settings.json')

@description('Suffix of every resource name: stable for one environment, subscription and region.')
var resourceToken = toLower(uniqueString(subscription().id, environmentName, location))

@description('Tags for every resource.')
var allTags = union(tags, { 'azd-env-name': environmentName })

// Every name that becomes part of a resource id is computed here from the parameters, never taken
// from a module's output, so What-If (and azd provision --preview) can predict the whole deployment.
@description('Resource names, all derived from resourceToken.')
var names = {
  resourceGroup: empty(resourceGroupName) ? 'rg-${environmentName}' : resourceGroupName
  identity: 'id-${resourceToken}'
  logAnalytics: 'log-${resourceToken}'
  applicationInsights: 'appi-${resourceToken}'
  storageAccount: 'st${resourceToken}'
  serviceBusNamespace: 'sb-${resourceToken}'
  functionApp: 'func-${resourceToken}'
  plan: 'plan-${resourceToken}'
  deploymentContainer: 'app-package-${take('func-${resourceToken}', 32)}-${take(resourceToken, 7)}'
}

@description('Resource id of the app\'s identity, computed before it exists: it names the identity\'s role assignments.')
var identityResourceId = resourceId(
  subscription().subscriptionId,
  names.resourceGroup,
  'Microsoft.ManagedIdentity/userAssignedIdentities',
  names.identity
)

resource rg 'Microsoft.Resources/resourceGroups@2025-04-01' = {
  name: names.resourceGroup
  location: location
  tags: allTags
}

module identity 'modules/identity.bicep' = {
  scope: rg
  params: {
    name: names.identity
    location: location
    tags: allTags
  }
}

module monitoring 'modules/monitoring.bicep' = {
  scope: rg
  params: {
    logAnalyticsName: names.logAnalytics
    applicationInsightsName: names.applicationInsights
    location: location
    tags: allTags
    retentionInDays: logRetentionDays
    publisherPrincipalId: identity.outputs.principalId
    publisherKey: identityResourceId
  }
}

module alerts 'modules/alerts.bicep' = if (alertsEnabled) {
  scope: rg
  params: {
    applicationInsightsName: names.applicationInsights
    namePrefix: names.functionApp
    location: location
    tags: allTags
    actionGroupId: alertActionGroupId
  }
  // The component's name is computed, not an output, so its creation must be awaited explicitly.
  dependsOn: [
    monitoring
  ]
}

module storage 'modules/storage.bicep' = {
  scope: rg
  params: {
    name: names.storageAccount
    location: location
    tags: allTags
    deploymentContainerName: names.deploymentContainer
    containers: appResources.containers
    queues: appResources.queues
    tables: appResources.tables
    workspaceId: monitoring.outputs.workspaceId
    dataLogs: storageDataLogs
  }
}

module serviceBus 'modules/servicebus.bicep' = {
  scope: rg
  params: {
    name: names.serviceBusNamespace
    location: location
    tags: allTags
    queues: appResources.serviceBus.queues
    topics: appResources.serviceBus.topics
    workspaceId: monitoring.outputs.workspaceId
  }
}

module appRoles 'modules/rbac.bicep' = {
  scope: rg
  params: {
    principalId: identity.outputs.principalId
    principalKey: identityResourceId
    principalType: 'ServicePrincipal'
    storageAccountName: names.storageAccount
    serviceBusNamespaceName: names.serviceBusNamespace
  }
  // The names above are computed, not outputs, so the scopes' creation must be awaited explicitly.
  dependsOn: [
    storage
    serviceBus
  ]
}

// The same names as before this file computed them: guid(account, developerPrincipalId, role).
module developerRoles 'modules/rbac.bicep' = if (!empty(developerPrincipalId)) {
  scope: rg
  params: {
    principalId: developerPrincipalId
    principalKey: developerPrincipalId
    principalType: developerPrincipalType
    storageAccountName: names.storageAccount
    serviceBusNamespaceName: names.serviceBusNamespace
  }
  dependsOn: [
    storage
    serviceBus
  ]
}

module functionApp 'modules/functionapp.bicep' = {
  scope: rg
  params: {
    name: names.functionApp
    planName: names.plan
    location: location
    tags: allTags
    identityId: identity.outputs.id
    identityClientId: identity.outputs.clientId
    storageEndpoints: storage.outputs.endpoints
    deploymentContainerName: names.deploymentContainer
    serviceBusNamespace: serviceBus.outputs.fullyQualifiedNamespace
    applicationInsightsName: names.applicationInsights
    workspaceId: monitoring.outputs.workspaceId
    nodeVersion: nodeVersion
    maximumInstanceCount: maximumInstanceCount
    instanceMemoryMB: instanceMemoryMB
    corsAllowedOrigins: corsAllowedOrigins
    appSettings: union(appSettingsFile.settings, appSettingsFile.hostSettings, extraAppSettings)
    authMode: authMode
    entraClientId: authMode != 'keys' && empty(entraClientId)
      ? fail('entraClientId is required when authMode is ${authMode} (docs/deployment.md, "Microsoft Entra ID")')
      : entraClientId
    entraTenantId: entraTenantId
  }
  // The host starts as soon as the app exists; its identity must already hold the data roles.
  dependsOn: [
    appRoles
  ]
}

@description('Region of every resource.')
output AZURE_LOCATION string = location

@description('Tenant the resources live in.')
output AZURE_TENANT_ID string = tenant().tenantId

@description('Resource group holding every resource.')
output AZURE_RESOURCE_GROUP string = rg.name

@description('Name of the Function App (scripts/deploy.sh publishes to it).')
output FUNCTION_APP_NAME string = functionApp.outputs.name

@description('Base URL of the API (append /api/...).')
output FUNCTION_APP_BASE_URL string = 'https://${functionApp.outputs.defaultHostName}'

@description('Name of the storage account (host storage, task hub and app data).')
output STORAGE_ACCOUNT_NAME string = names.storageAccount

@description('Host name of the Service Bus namespace (ServiceBusConnection__fullyQualifiedNamespace).')
output SERVICE_BUS_NAMESPACE string = serviceBus.outputs.fullyQualifiedNamespace

@description('Client id of the app\'s managed identity (the __clientId settings).')
output MANAGED_IDENTITY_CLIENT_ID string = identity.outputs.clientId
