/**
 * The Service Bus connection, optional: `ServiceBusConnection`, the name the Functions host reads for
 * Service Bus bindings, as a connection string, or `ServiceBusConnection__fullyQualifiedNamespace`
 * with optional `__credential=managedidentity` and `__clientId`. Without it, features that publish to
 * Service Bus stay local. Nothing here touches the network; ./serviceBus.ts builds the client.
 */
import type { SettingsSource } from '../config';
import { isManagedIdentity } from '../storage/connection';

/** The Service Bus connection's setting (the Functions host reads the same one for the bindings). */
export const serviceBusConnectionName = 'ServiceBusConnection';

export type ServiceBusConnection =
  | { readonly kind: 'connectionString'; readonly setting: string; readonly connectionString: string }
  | {
      readonly kind: 'identity';
      readonly setting: string;
      readonly fullyQualifiedNamespace: string;
      readonly managedIdentity: boolean;
      readonly clientId: string | undefined;
    };

/** The connection, or undefined when none is configured (a malformed one is reported). */
export function readServiceBusConnection(
  source: SettingsSource,
  setting: string = serviceBusConnectionName,
): ServiceBusConnection | undefined {
  const text = source.raw(setting);
  if (text !== undefined) {
    if (!/endpoint=sb:\/\//i.test(text)) source.problem(`${setting}: not a Service Bus connection string (no Endpoint=sb://…)`);
    return { kind: 'connectionString', setting, connectionString: text };
  }
  const namespace = source.string(`${setting}__fullyQualifiedNamespace`, '', /^([A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+)?$/);
  if (namespace === '') return undefined;
  return {
    kind: 'identity',
    setting,
    fullyQualifiedNamespace: namespace,
    managedIdentity: isManagedIdentity(source, setting),
    clientId: source.raw(`${setting}__clientId`),
  };
}
