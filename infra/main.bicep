// Tallyho in Azure: a Flex Consumption Function App (Linux, Node) with one user-assigned managed
// identity, storage with shared keys off, Service Bus with local auth off, Application Insights on
// Log Analytics, diagnostic settings and least-privilege data roles. No keys or connection strings.
//
// Deploy: `npm run deploy -- --env <name> --location <region>` (az CLI) or `azd up`; see README.
// Local modules only: registry (br/public:) modules cannot be restored offline.
targetScope = 'subscription'

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
param corsAllowedOrigins array = []

@description('Object id of a developer (or CI principal) to get the same storage and Service Bus data roles as the app, to run it locally against these resources. Empty: nobody.')
param developerPrincipalId string = ''

@description('Kind of that principal.')
@allowed([
  'User'
  'ServicePrincipal'
  'Group'
])
param developerPrincipalType string = 'User'

@description('Require Microsoft Entra ID sign-in (App Service authentication) in front of the admin surface.')
param adminAuthEnabled bool = false

@description('Application (client) id of the Entra app registration used for sign-in; required when adminAuthEnabled.')
param adminAuthClientId string = ''

@description('Tenant of that app registration. Default: the deploying tenant.')
param adminAuthTenantId string = tenant().tenantId

@description('Paths that need no sign-in when adminAuthEnabled: client apps authenticate with function keys, so list their API prefixes here.')
param adminAuthExcludedPaths array = [
  '/api/health'
]

@description('What an unauthenticated request gets when sign-in is required.')
@allowed([
  'RedirectToLoginPage'
  'Return401'
  'Return403'
])
param adminAuthUnauthenticatedAction string = 'RedirectToLoginPage'

@description('Extra app settings, merged over infra/app-settings.json (not for secrets).')
param extraAppSettings object = {}

@description('Send per-request storage logs to Log Analytics (metrics are always sent).')
param storageDataLogs bool = false

@description('Days Log Analytics keeps data.')
@minValue(30)
@maxValue(730)
param logRetentionDays int = 30

@description('Tags for every resource (azd-env-name is added).')
param tags object = {}

// Generated from shared/resources.ts by `npm run infra:sync`; a test keeps the two equal.
var appResources = loadJsonContent('app-resources.json')
// TALLYHO_* settings whose Azure value differs from the app's default; a test checks the names.
var appSettingsFile = loadJsonContent('app-settings.json')

var resourceToken = toLower(uniqueString(subscription().id, environmentName, location))
var allTags = union(tags, { 'azd-env-name': environmentName })
var functionAppName = 'func-${resourceToken}'
var deploymentContainerName = 'app-package-${take(functionAppName, 32)}-${take(resourceToken, 7)}'

resource rg 'Microsoft.Resources/resourceGroups@2024-03-01' = {
  name: empty(resourceGroupName) ? 'rg-${environmentName}' : resourceGroupName
  location: location
  tags: allTags
}

module identity 'modules/identity.bicep' = {
  name: 'identity'
  scope: rg
  params: {
    name: 'id-${resourceToken}'
    location: location
    tags: allTags
  }
}

module monitoring 'modules/monitoring.bicep' = {
  name: 'monitoring'
  scope: rg
  params: {
    logAnalyticsName: 'log-${resourceToken}'
    applicationInsightsName: 'appi-${resourceToken}'
    location: location
    tags: allTags
    retentionInDays: logRetentionDays
    publisherPrincipalId: identity.outputs.principalId
  }
}

module storage 'modules/storage.bicep' = {
  name: 'storage'
  scope: rg
  params: {
    name: 'st${resourceToken}'
    location: location
    tags: allTags
    deploymentContainerName: deploymentContainerName
    containers: appResources.containers
    queues: appResources.queues
    tables: appResources.tables
    workspaceId: monitoring.outputs.workspaceId
    dataLogs: storageDataLogs
  }
}

module serviceBus 'modules/servicebus.bicep' = {
  name: 'servicebus'
  scope: rg
  params: {
    name: 'sb-${resourceToken}'
    location: location
    tags: allTags
    queues: appResources.serviceBus.queues
    topics: appResources.serviceBus.topics
    workspaceId: monitoring.outputs.workspaceId
  }
}

module appRoles 'modules/rbac.bicep' = {
  name: 'app-roles'
  scope: rg
  params: {
    principalId: identity.outputs.principalId
    principalType: 'ServicePrincipal'
    storageAccountName: storage.outputs.name
    serviceBusNamespaceName: serviceBus.outputs.name
  }
}

module developerRoles 'modules/rbac.bicep' = if (!empty(developerPrincipalId)) {
  name: 'developer-roles'
  scope: rg
  params: {
    principalId: developerPrincipalId
    principalType: developerPrincipalType
    storageAccountName: storage.outputs.name
    serviceBusNamespaceName: serviceBus.outputs.name
  }
}

module functionApp 'modules/functionapp.bicep' = {
  name: 'functionapp'
  scope: rg
  params: {
    name: functionAppName
    planName: 'plan-${resourceToken}'
    location: location
    tags: allTags
    identityId: identity.outputs.id
    identityClientId: identity.outputs.clientId
    storageAccountName: storage.outputs.name
    storageBlobEndpoint: storage.outputs.blobEndpoint
    deploymentContainerName: deploymentContainerName
    serviceBusNamespace: serviceBus.outputs.fullyQualifiedNamespace
    applicationInsightsName: monitoring.outputs.applicationInsightsName
    workspaceId: monitoring.outputs.workspaceId
    nodeVersion: nodeVersion
    maximumInstanceCount: maximumInstanceCount
    instanceMemoryMB: instanceMemoryMB
    corsAllowedOrigins: corsAllowedOrigins
    appSettings: union(appSettingsFile.settings, extraAppSettings)
    authEnabled: adminAuthEnabled
    authClientId: adminAuthClientId
    authTenantId: adminAuthTenantId
    authExcludedPaths: adminAuthExcludedPaths
    authUnauthenticatedAction: adminAuthUnauthenticatedAction
  }
  // The host starts as soon as the app exists; its identity must already hold the data roles.
  dependsOn: [
    appRoles
  ]
}

output AZURE_LOCATION string = location
output AZURE_TENANT_ID string = tenant().tenantId
output AZURE_RESOURCE_GROUP string = rg.name
output FUNCTION_APP_NAME string = functionApp.outputs.name
output FUNCTION_APP_BASE_URL string = 'https://${functionApp.outputs.defaultHostName}'
output STORAGE_ACCOUNT_NAME string = storage.outputs.name
output SERVICE_BUS_NAMESPACE string = serviceBus.outputs.fullyQualifiedNamespace
output MANAGED_IDENTITY_CLIENT_ID string = identity.outputs.clientId
