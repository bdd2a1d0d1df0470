/**
 * The process's Service Bus client, built once from the validated config (a connection string, or
 * `ServiceBusConnection__fullyQualifiedNamespace` with a managed identity), closed on shutdown.
 * Undefined when no Service Bus is configured: features that publish to it then stay local.
 */
import { ServiceBusClient, type ServiceBusSender } from '@azure/service-bus';

import type { Config, ServiceBusConnection } from '../config';
import { onShutdown } from '../lifecycle';
import { tokenCredentialFor } from '../storage/clients';

export function createServiceBusClient(connection: ServiceBusConnection): ServiceBusClient {
  return connection.kind === 'connectionString'
    ? new ServiceBusClient(connection.connectionString)
    : new ServiceBusClient(connection.fullyQualifiedNamespace, tokenCredentialFor(connection.managedIdentity, connection.clientId));
}

let client: ServiceBusClient | undefined;
const senders = new Map<string, ServiceBusSender>();

/** A sender for a queue or topic (one per entity per process), or undefined without Service Bus. */
export function getServiceBusSender(config: Config, entity: string): ServiceBusSender | undefined {
  if (config.serviceBus === undefined) return undefined;
  if (client === undefined) {
    const created = createServiceBusClient(config.serviceBus);
    client = created;
    onShutdown(async () => {
      senders.clear();
      client = undefined;
      await created.close();
    });
  }
  let sender = senders.get(entity);
  if (sender === undefined) {
    sender = client.createSender(entity);
    senders.set(entity, sender);
  }
  return sender;
}
