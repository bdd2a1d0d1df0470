/** The one Durable client port (shared/durable/client.ts); the task hub's setting is in settings.ts. */
export type { DurableClient } from './client';
