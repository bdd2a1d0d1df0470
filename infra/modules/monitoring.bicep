// Log Analytics workspace, workspace-based Application Insights with local (key) auth off, and the
// role that lets the app's identity publish telemetry with an Entra token instead of the key.

import { tagSet } from 'types.bicep'

@description('Name of the Log Analytics workspace.')
param logAnalyticsName string

@description('Name of the Application Insights component.')
param applicationInsightsName string

@description('Azure region.')
param location string

@description('Tags for every resource.')
param tags tagSet

@description('Days Log Analytics keeps data (the first 31 days cost nothing extra).')
@minValue(30)
@maxValue(730)
param retentionInDays int

@description('Object id of the app identity, granted Monitoring Metrics Publisher on the component (known only at deploy time).')
param publisherPrincipalId string

@description('A value known before the deployment starts that names that identity in the role-assignment name (its resource id), so What-If can predict the name.')
param publisherKey string

@description('Built-in role: Monitoring Metrics Publisher (the same id in every tenant).')
var monitoringMetricsPublisher = '3913510d-42f4-4e42-8a64-420c390055eb'

resource workspace 'Microsoft.OperationalInsights/workspaces@2025-07-01' = {
  name: logAnalyticsName
  location: location
  tags: tags
  properties: {
    sku: {
      name: 'PerGB2018'
    }
    retentionInDays: retentionInDays
    features: {
      disableLocalAuth: true
    }
  }
}

resource appInsights 'Microsoft.Insights/components@2020-02-02' = {
  name: applicationInsightsName
  location: location
  tags: tags
  kind: 'web'
  properties: {
    Application_Type: 'web'
    WorkspaceResourceId: workspace.id
    IngestionMode: 'LogAnalytics'
    DisableLocalAuth: true
  }
}

resource publisher 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  scope: appInsights
  name: guid(appInsights.id, publisherKey, monitoringMetricsPublisher)
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', monitoringMetricsPublisher)
    principalId: publisherPrincipalId
    principalType: 'ServicePrincipal'
  }
}

@description('Resource id of the Log Analytics workspace (the target of every diagnostic setting).')
output workspaceId string = workspace.id
