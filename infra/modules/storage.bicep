// The storage account: host storage (AzureWebJobsStorage, the Durable task hub), the Flex deployment
// container and every table, queue and container the app names in shared/resources.ts. Shared-key
// access is off, so every client (host, app, deployment) must use Entra ID.

import { storageEndpointSet, tagSet } from 'types.bicep'

@description('Storage account name (3-24 lowercase letters and digits).')
param name string

@description('Azure region.')
param location string

@description('Tags for the account.')
param tags tagSet

@description('Blob container Flex Consumption deploys the app package into.')
param deploymentContainerName string

@description('Blob containers the app uses.')
param containers string[]

@description('Storage queues the app uses.')
param queues string[]

@description('Tables the app uses.')
param tables string[]

@description('Log Analytics workspace that receives the diagnostic settings.')
param workspaceId string

@description('Also send per-request storage logs (StorageRead/Write/Delete) to Log Analytics.')
param dataLogs bool

resource storage 'Microsoft.Storage/storageAccounts@2025-01-01' = {
  name: name
  location: location
  tags: tags
  kind: 'StorageV2'
  sku: {
    name: 'Standard_LRS'
  }
  properties: {
    accessTier: 'Hot'
    allowBlobPublicAccess: false
    allowSharedKeyAccess: false
    allowCrossTenantReplication: false
    defaultToOAuthAuthentication: true
    minimumTlsVersion: 'TLS1_2'
    supportsHttpsTrafficOnly: true
    publicNetworkAccess: 'Enabled'
    dnsEndpointType: 'Standard'
    networkAcls: {
      defaultAction: 'Allow'
      bypass: 'AzureServices'
    }
  }
}

resource blobService 'Microsoft.Storage/storageAccounts/blobServices@2025-01-01' = {
  parent: storage
  name: 'default'
}

resource queueService 'Microsoft.Storage/storageAccounts/queueServices@2025-01-01' = {
  parent: storage
  name: 'default'
}

resource tableService 'Microsoft.Storage/storageAccounts/tableServices@2025-01-01' = {
  parent: storage
  name: 'default'
}

resource deploymentContainer 'Microsoft.Storage/storageAccounts/blobServices/containers@2025-01-01' = {
  parent: blobService
  name: deploymentContainerName
  properties: {
    publicAccess: 'None'
  }
}

resource appContainers 'Microsoft.Storage/storageAccounts/blobServices/containers@2025-01-01' = [
  for container in containers: {
    parent: blobService
    name: container
    properties: {
      publicAccess: 'None'
    }
  }
]

resource appQueues 'Microsoft.Storage/storageAccounts/queueServices/queues@2025-01-01' = [
  for queue in queues: {
    parent: queueService
    name: queue
  }
]

resource appTables 'Microsoft.Storage/storageAccounts/tableServices/tables@2025-01-01' = [
  for table in tables: {
    parent: tableService
    name: table
  }
]

// Metrics always; request logs only on request: at thousands of requests per second they would cost
// more in Log Analytics ingestion than the storage itself.
@description('Request log categories sent to Log Analytics (none unless dataLogs).')
var serviceLogs = dataLogs ? [{ categoryGroup: 'allLogs', enabled: true }] : []

@description('Metric categories sent to Log Analytics.')
var transactionMetrics = [{ category: 'Transaction', enabled: true }]

// The diagnostic settings stay on 2021-05-01-preview, not the 2016 version use-recent-api-versions
// suggests: categoryGroup needs it.

#disable-next-line use-recent-api-versions
resource accountDiagnostics 'Microsoft.Insights/diagnosticSettings@2021-05-01-preview' = {
  scope: storage
  name: 'to-log-analytics'
  properties: {
    workspaceId: workspaceId
    metrics: transactionMetrics
  }
}

#disable-next-line use-recent-api-versions
resource blobDiagnostics 'Microsoft.Insights/diagnosticSettings@2021-05-01-preview' = {
  scope: blobService
  name: 'to-log-analytics'
  properties: {
    workspaceId: workspaceId
    logs: serviceLogs
    metrics: transactionMetrics
  }
}

#disable-next-line use-recent-api-versions
resource queueDiagnostics 'Microsoft.Insights/diagnosticSettings@2021-05-01-preview' = {
  scope: queueService
  name: 'to-log-analytics'
  properties: {
    workspaceId: workspaceId
    logs: serviceLogs
    metrics: transactionMetrics
  }
}

#disable-next-line use-recent-api-versions
resource tableDiagnostics 'Microsoft.Insights/diagnosticSettings@2021-05-01-preview' = {
  scope: tableService
  name: 'to-log-analytics'
  properties: {
    workspaceId: workspaceId
    logs: serviceLogs
    metrics: transactionMetrics
  }
}

// The account's own endpoints, so the app settings are right in every cloud (and with custom DNS).
@description('Blob, queue and table endpoints of the account.')
output endpoints storageEndpointSet = {
  blob: storage.properties.primaryEndpoints.blob
  queue: storage.properties.primaryEndpoints.queue
  table: storage.properties.primaryEndpoints.table
}
