// Shared parameter types, so every module states the shape it accepts instead of `object`/`array`
// (and a wrong shape fails at compile time, not in the middle of a deployment).

@export()
@description('Resource tags: names to string values.')
type tagSet = {
  *: string
}

@export()
@description('App settings: names to string values (the platform stores every setting as a string).')
type settingSet = {
  *: string
}

@export()
@description('A Service Bus topic the app publishes to, and the subscriptions to create on it.')
type topicSpec = {
  @description('Topic name.')
  name: string

  @description('Subscription names (empty: the app only publishes; consumers add their own).')
  subscriptions: string[]
}

@export()
@description('Kind of principal a role is assigned to; a wrong kind delays or fails the assignment.')
type principalKind = 'ServicePrincipal' | 'User' | 'Group'

@export()
@description('Storage endpoints of one account (https://<account>.<service>.<suffix>/), from its primaryEndpoints.')
type storageEndpointSet = {
  @description('Blob service endpoint.')
  blob: string

  @description('Queue service endpoint.')
  queue: string

  @description('Table service endpoint.')
  table: string
}
