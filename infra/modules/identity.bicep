// The app's one identity. User-assigned, so its role assignments exist before the app starts and
// the same identity serves host storage, deployment storage, Service Bus and Application Insights.

import { tagSet } from 'types.bicep'

@description('Name of the user-assigned managed identity.')
param name string

@description('Azure region.')
param location string

@description('Tags for the identity.')
param tags tagSet

resource identity 'Microsoft.ManagedIdentity/userAssignedIdentities@2024-11-30' = {
  name: name
  location: location
  tags: tags
}

@description('Resource id of the identity (what the site and the deployment storage reference).')
output id string = identity.id

@description('Object id of the identity\'s service principal (what role assignments grant to).')
output principalId string = identity.properties.principalId

@description('Client id of the identity (what the __clientId settings and AZURE_CLIENT_ID name).')
output clientId string = identity.properties.clientId
