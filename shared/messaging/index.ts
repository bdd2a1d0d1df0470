/** Service Bus: the optional connection and the app's senders (shared/messaging/serviceBus.ts). */
export { readServiceBusConnection, serviceBusConnectionName } from './connection';
export { serviceBusSenders, type ServiceBusSenders } from './serviceBus';
