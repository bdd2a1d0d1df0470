/**
 * The app's Service Bus client, built on first use from the validated connection (a connection
 * string, or `ServiceBusConnection__fullyQualifiedNamespace` with a managed identity), one sender
 * per entity, closed by the app on shutdown. Without a Service Bus connection every sender is
 * undefined: features that publish to it then stay local.
 */
import type { ServiceBusClient, ServiceBusSender } from '@azure/service-bus';

import type { ServiceBusConnection } from './connection';
import { serviceBusSdk } from '../onDemand';
import { tokenCredentialFor } from '../storage/clients';

function createServiceBusClient(connection: ServiceBusConnection): ServiceBusClient {
  const { ServiceBusClient } = serviceBusSdk();
  return connection.kind === 'connectionString'
    ? new ServiceBusClient(connection.connectionString)
    : new ServiceBusClient(connection.fullyQualifiedNamespace, tokenCredentialFor(connection.managedIdentity, connection.clientId));
}

export interface ServiceBusSenders {
  /** A sender for a queue or topic (one per entity), or undefined without Service Bus. */
  sender(entity: string): ServiceBusSender | undefined;
  /** Closes the client (and so every sender); a later `sender` builds a new one. */
  close(): Promise<void>;
}

export function serviceBusSenders(connection: ServiceBusConnection | undefined): ServiceBusSenders {
  let client: ServiceBusClient | undefined;
  const senders = new Map<string, ServiceBusSender>();
  return {
    sender(entity) {
      if (connection === undefined) return undefined;
      client ??= createServiceBusClient(connection);
      let sender = senders.get(entity);
      if (sender === undefined) {
        sender = client.createSender(entity);
        senders.set(entity, sender);
      }
      return sender;
    },
    async close() {
      const closing = client;
      client = undefined;
      senders.clear();
      await closing?.close();
    },
  };
}
