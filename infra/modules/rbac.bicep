// Data-plane roles for one principal (the app's identity, or a developer): exactly what the app and
// the Durable task hub use — blob, queue and table data on the storage account, send on the Service
// Bus namespace. No receive (the app has no Service Bus trigger and never creates a receiver), no
// control-plane roles, no Owner roles on Service Bus.
//
// Role-assignment names are guid(scope, principalKey, role): principalKey is known before the
// deployment starts, so What-If predicts every name. (A managed identity's object id is known only
// once it exists, so it cannot name its own assignments.)

import { principalKind } from 'types.bicep'

@description('Object id of the principal; only the assignments\' properties use it.')
param principalId string

@description('A value known before the deployment starts that identifies the principal in the role-assignment names: a developer\'s object id, or the resource id of the app\'s identity.')
param principalKey string

@description('Kind of principal; a wrong kind delays or fails the assignment.')
param principalType principalKind

@description('The storage account holding host storage, the task hub and the app data.')
param storageAccountName string

@description('The Service Bus namespace.')
param serviceBusNamespaceName string

@description('Built-in role definition ids (the same in every tenant).')
var roles = {
  // The host needs Owner (not Contributor) on blobs for AzureWebJobsStorage and the deployment container.
  storageBlobDataOwner: 'b7e6dc6d-f1e8-4753-8033-0f276bb0955b'
  storageQueueDataContributor: '974c5e8b-45b9-4653-ba55-5f855dd0fb88'
  storageTableDataContributor: '0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3'
  // Send also covers scheduling and cancelling scheduled messages (the schedules' Service Bus mode).
  serviceBusDataSender: '69a216fc-b8fb-44d8-bc22-1f3c2cd27a39'
}

resource storage 'Microsoft.Storage/storageAccounts@2025-01-01' existing = {
  name: storageAccountName
}

resource namespace 'Microsoft.ServiceBus/namespaces@2026-01-01' existing = {
  name: serviceBusNamespaceName
}

resource blobData 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  scope: storage
  name: guid(storage.id, principalKey, roles.storageBlobDataOwner)
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.storageBlobDataOwner)
    principalId: principalId
    principalType: principalType
  }
}

resource queueData 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  scope: storage
  name: guid(storage.id, principalKey, roles.storageQueueDataContributor)
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.storageQueueDataContributor)
    principalId: principalId
    principalType: principalType
  }
}

resource tableData 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  scope: storage
  name: guid(storage.id, principalKey, roles.storageTableDataContributor)
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.storageTableDataContributor)
    principalId: principalId
    principalType: principalType
  }
}

// Namespace scope: it covers every queue and topic the app sends to.
resource serviceBusSender 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  scope: namespace
  name: guid(namespace.id, principalKey, roles.serviceBusDataSender)
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.serviceBusDataSender)
    principalId: principalId
    principalType: principalType
  }
}
