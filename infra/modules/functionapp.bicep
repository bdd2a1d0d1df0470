// The Flex Consumption plan and Function App. Every connection is identity-based (the user-assigned
// identity's client id on each), so no key or connection string reaches the app settings.

import { settingSet, storageEndpointSet, tagSet } from 'types.bicep'

@description('Function App name (also the default host name prefix).')
param name string

@description('Flex Consumption plan name.')
param planName string

@description('Azure region.')
param location string

@description('Tags for every resource; the site also gets azd-service-name.')
param tags tagSet

@description('Resource id of the user-assigned identity.')
param identityId string

@description('Client id of the user-assigned identity.')
param identityClientId string

@description('Endpoints of the storage account for host storage, the Durable task hub and the app data.')
param storageEndpoints storageEndpointSet

@description('Blob container Flex Consumption deploys the package into.')
param deploymentContainerName string

@description('Fully qualified Service Bus namespace (<name>.servicebus.windows.net).')
param serviceBusNamespace string

@description('Application Insights component that receives the telemetry (named in main.bicep, so What-If can resolve it).')
param applicationInsightsName string

@description('Log Analytics workspace that receives the diagnostic settings.')
param workspaceId string

@description('Node.js version of the Functions runtime.')
@allowed([
  '20'
  '22'
])
param nodeVersion string

@description('Most instances the app scales out to.')
param maximumInstanceCount int

@description('Memory per instance, in MB.')
param instanceMemoryMB int

@description('Browser origins allowed to call the API.')
param corsAllowedOrigins string[]

@description('App settings (TALLYHO_* and any extra); the identity-based connection settings always win.')
param appSettings settingSet

@description('Who opens the door: keys, entra or keys+entra (main.bicep says what each means).')
@allowed([
  'keys'
  'entra'
  'keys+entra'
])
param authMode string

@description('Application (client) id of the Entra app registration (empty in keys mode).')
param entraClientId string

@description('Directory (tenant) id of that registration.')
param entraTenantId string

resource appInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: applicationInsightsName
}

resource plan 'Microsoft.Web/serverfarms@2025-03-01' = {
  name: planName
  location: location
  tags: tags
  kind: 'functionapp'
  sku: {
    name: 'FC1'
    tier: 'FlexConsumption'
  }
  properties: {
    reserved: true
  }
}

// The names the Functions host reads for identity-based connections; shared/config.ts reads the same.
// Storage by service URI, as the Flex Consumption templates write it: the account's own endpoints
// hold the cloud's suffix, so sovereign clouds work unchanged.
@description('Identity-based connection settings and Application Insights; they win over appSettings.')
var identitySettings = {
  AzureWebJobsStorage__blobServiceUri: storageEndpoints.blob
  AzureWebJobsStorage__queueServiceUri: storageEndpoints.queue
  AzureWebJobsStorage__tableServiceUri: storageEndpoints.table
  AzureWebJobsStorage__credential: 'managedidentity'
  AzureWebJobsStorage__clientId: identityClientId
  ServiceBusConnection__fullyQualifiedNamespace: serviceBusNamespace
  ServiceBusConnection__credential: 'managedidentity'
  ServiceBusConnection__clientId: identityClientId
  // Identifies the component; with local auth off, ingestion also needs the identity's Entra token.
  APPLICATIONINSIGHTS_CONNECTION_STRING: appInsights.properties.ConnectionString
  APPLICATIONINSIGHTS_AUTHENTICATION_STRING: 'ClientId=${identityClientId};Authorization=AAD'
}

resource site 'Microsoft.Web/sites@2025-03-01' = {
  name: name
  location: location
  tags: union(tags, { 'azd-service-name': 'api' })
  kind: 'functionapp,linux'
  identity: {
    type: 'UserAssigned'
    userAssignedIdentities: {
      '${identityId}': {}
    }
  }
  properties: {
    serverFarmId: plan.id
    httpsOnly: true
    siteConfig: {
      minTlsVersion: '1.2'
      ftpsState: 'Disabled'
      http20Enabled: true
      cors: {
        allowedOrigins: corsAllowedOrigins
        supportCredentials: false
      }
    }
    functionAppConfig: {
      deployment: {
        storage: {
          type: 'blobContainer'
          value: '${storageEndpoints.blob}${deploymentContainerName}'
          authentication: {
            type: 'UserAssignedIdentity'
            userAssignedIdentityResourceId: identityId
          }
        }
      }
      scaleAndConcurrency: {
        maximumInstanceCount: maximumInstanceCount
        instanceMemoryMB: instanceMemoryMB
      }
      runtime: {
        name: 'node'
        version: nodeVersion
      }
    }
  }
}

// One issuer and one audience list for the platform's check (authsettingsV2 below) and the app's own
// (shared/identity: TALLYHO_ENTRA_*), so a token one accepts the other accepts too. v2 tokens
// (the registration's requestedAccessTokenVersion 2) carry the client id as audience; the App ID URI
// is accepted as well for clients that ask for it.
@description('The login endpoint of this cloud, scheme and host only (the app\'s TALLYHO_ENTRA_AUTHORITY).')
var entraAuthority = join(take(split(environment().authentication.loginEndpoint, '/'), 3), '/')

@description('Token audiences the platform and the app accept.')
var entraAudiences = [
  entraClientId
  'api://${entraClientId}'
]

@description('The app\'s identity settings in the entra modes (none in keys mode: its defaults are keys).')
var modeSettings = authMode == 'keys'
  ? {}
  : {
      TALLYHO_AUTH_MODE: authMode
      TALLYHO_ENTRA_TENANT_ID: entraTenantId
      TALLYHO_ENTRA_AUDIENCES: join(entraAudiences, ',')
      TALLYHO_ENTRA_AUTHORITY: entraAuthority
    }

resource settings 'Microsoft.Web/sites/config@2025-03-01' = {
  parent: site
  name: 'appsettings'
  properties: union(appSettings, modeSettings, identitySettings)
}

// Deployments authenticate with Entra tokens; basic-auth publishing credentials stay off.
resource scmBasicAuth 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2025-03-01' = {
  parent: site
  name: 'scm'
  properties: {
    allow: false
  }
}

resource ftpBasicAuth 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2025-03-01' = {
  parent: site
  name: 'ftp'
  properties: {
    allow: false
  }
}

// App Service authentication in the entra modes: the platform validates an Entra token (issuer,
// audience, signature) and hands the app its principal (x-ms-client-principal, trusted by the app only
// where the platform sets WEBSITE_AUTH_ENABLED), and browsers can sign in at /.auth/login/aad. It lets
// unauthenticated requests through (AllowAnonymous): in keys+entra mode function keys are the door,
// and in entra mode Tallyho credentials and the anonymous routes (health, OpenAPI, the console's
// pages) must still reach the app, which refuses whatever its route table does not allow.
resource auth 'Microsoft.Web/sites/config@2025-03-01' = if (authMode != 'keys') {
  parent: site
  name: 'authsettingsV2'
  properties: {
    platform: {
      enabled: true
    }
    globalValidation: {
      requireAuthentication: false
      unauthenticatedClientAction: 'AllowAnonymous'
    }
    httpSettings: {
      requireHttps: true
    }
    identityProviders: {
      azureActiveDirectory: {
        enabled: true
        registration: {
          clientId: entraClientId
          openIdIssuer: '${entraAuthority}/${entraTenantId}/v2.0'
        }
        validation: {
          allowedAudiences: entraAudiences
        }
      }
    }
    login: {
      tokenStore: {
        enabled: false
      }
    }
  }
}

// 2021-05-01-preview, the version every other diagnostic setting here needs for categoryGroup.
#disable-next-line use-recent-api-versions
resource diagnostics 'Microsoft.Insights/diagnosticSettings@2021-05-01-preview' = {
  scope: site
  name: 'to-log-analytics'
  properties: {
    workspaceId: workspaceId
    logs: [
      {
        category: 'FunctionAppLogs'
        enabled: true
      }
    ]
    metrics: [
      {
        category: 'AllMetrics'
        enabled: true
      }
    ]
  }
}

@description('Name of the Function App (what scripts/deploy.sh publishes to).')
output name string = site.name

@description('Default host name of the Function App (<name>.azurewebsites.net or a regional variant).')
output defaultHostName string = site.properties.defaultHostName
