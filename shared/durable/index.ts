/** The one Durable client port (shared/durable/client.ts) and the task hub's setting. */
export type { DurableClient } from './client';
export { durableSettings } from './settings';
