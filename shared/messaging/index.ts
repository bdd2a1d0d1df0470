/** Service Bus: the app's senders (shared/messaging/serviceBus.ts); the optional connection is read by connection.ts. */
export { serviceBusSenders, type ServiceBusSenders } from './serviceBus';
