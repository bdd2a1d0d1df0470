// One Service Bus topic and its subscriptions.

@description('The namespace the topic belongs to.')
param namespaceName string

@description('Topic name.')
param topicName string

@description('Subscription names.')
param subscriptions string[]

resource namespace 'Microsoft.ServiceBus/namespaces@2026-01-01' existing = {
  name: namespaceName
}

resource topic 'Microsoft.ServiceBus/namespaces/topics@2026-01-01' = {
  parent: namespace
  name: topicName
  properties: {
    defaultMessageTimeToLive: 'P14D'
    // Publishers set a deterministic message id (e.g. <job>:<round>:completed), so a republish after
    // a crash is dropped here instead of reaching subscribers twice.
    requiresDuplicateDetection: true
    duplicateDetectionHistoryTimeWindow: 'PT1H'
  }
}

resource topicSubscriptions 'Microsoft.ServiceBus/namespaces/topics/subscriptions@2026-01-01' = [
  for subscription in subscriptions: {
    parent: topic
    name: subscription
    properties: {
      lockDuration: 'PT1M'
      maxDeliveryCount: 10
      deadLetteringOnMessageExpiration: true
    }
  }
]
