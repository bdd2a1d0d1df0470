// Service Bus namespace (Standard: topics need it) with local (SAS key) auth off, and the queues,
// topics and subscriptions the app names in shared/resources.ts.

import { tagSet, topicSpec } from 'types.bicep'

@description('Namespace name (6-50 letters, digits and hyphens).')
param name string

@description('Azure region.')
param location string

@description('Tags for the namespace.')
param tags tagSet

@description('Queues the app uses.')
param queues string[]

@description('Topics the app uses.')
param topics topicSpec[]

@description('Log Analytics workspace that receives the diagnostic settings.')
param workspaceId string

resource namespace 'Microsoft.ServiceBus/namespaces@2026-01-01' = {
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

resource appQueues 'Microsoft.ServiceBus/namespaces/queues@2026-01-01' = [
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
    params: {
      namespaceName: namespace.name
      topicName: topic.name
      subscriptions: topic.subscriptions
    }
  }
]

// 2021-05-01-preview, not the 2016 version use-recent-api-versions suggests: categoryGroup needs it.
#disable-next-line use-recent-api-versions
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

// serviceBusEndpoint is https://<namespace>.<suffix>:443/; clients want the bare host name.
@description('Host name of the namespace (<name>.servicebus.windows.net in the public cloud).')
output fullyQualifiedNamespace string = split(replace(namespace.properties.serviceBusEndpoint, 'https://', ''), ':')[0]
