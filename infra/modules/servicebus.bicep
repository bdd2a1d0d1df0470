// Service Bus namespace (Standard: topics need it) with local (SAS key) auth off, and the queues,
// topics and subscriptions the app names in shared/resources.ts.

@description('Namespace name (6-50 letters, digits and hyphens).')
param name string

@description('Azure region.')
param location string

@description('Tags for the namespace.')
param tags object

@description('Queues the app uses.')
param queues array

@description('Topics the app uses, each { name: string, subscriptions: string[] }.')
param topics array

@description('Log Analytics workspace that receives the diagnostic settings.')
param workspaceId string

resource namespace 'Microsoft.ServiceBus/namespaces@2024-01-01' = {
  name: name
  location: location
  tags: tags
  sku: {
    name: 'Standard'
    tier: 'Standard'
  }
  properties: {
    disableLocalAuth: true
    minimumTlsVersion: '1.2'
    publicNetworkAccess: 'Enabled'
  }
}

resource appQueues 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' = [
  for queue in queues: {
    parent: namespace
    name: queue
    properties: {
      lockDuration: 'PT1M'
      maxDeliveryCount: 10
      deadLetteringOnMessageExpiration: true
      defaultMessageTimeToLive: 'P14D'
    }
  }
]

// One module per topic, so each subscription can name its topic as its parent.
module appTopics 'servicebus-topic.bicep' = [
  for topic in topics: {
    name: take('sb-topic-${topic.name}', 64)
    params: {
      namespaceName: namespace.name
      topicName: topic.name
      subscriptions: topic.subscriptions
    }
  }
]

resource diagnostics 'Microsoft.Insights/diagnosticSettings@2021-05-01-preview' = {
  scope: namespace
  name: 'to-log-analytics'
  properties: {
    workspaceId: workspaceId
    logs: [
      {
        categoryGroup: 'allLogs'
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

output name string = namespace.name
// serviceBusEndpoint is https://<namespace>.<suffix>:443/; clients want the bare host name.
output fullyQualifiedNamespace string = split(replace(namespace.properties.serviceBusEndpoint, 'https://', ''), ':')[0]
