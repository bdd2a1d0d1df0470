/**
 * What the schedules capability needs from Durable Functions, as a port (shared/ does not depend on
 * the Functions runtime; tests can record calls). `durableScheduleEngine` builds it on the few
 * client operations functions/ provides.
 */
import type { ScheduleState } from './machine';
import { scheduleOrchestrator, wakeEvent } from './names';

export interface ScheduleEngine {
  /** Starts the schedule's orchestration (instance id = schedule id); one already running is success. */
  start(id: string, input: ScheduleState): Promise<void>;
  /** Asks the orchestration to read the index now. False when no instance took the event. */
  wake(id: string): Promise<boolean>;
  /** The orchestration's Durable runtime status (`Running`, `Failed`, …); undefined when there is none. */
  status(id: string): Promise<string | undefined>;
}

/** The Durable client operations the engine uses (functions/_durable.ts provides them). */
export interface DurableOperations {
  startNew(orchestration: string, instanceId: string, input: unknown): Promise<void>;
  runtimeStatus(instanceId: string): Promise<string | undefined>;
  raiseEvent(instanceId: string, event: string, data: unknown): Promise<'delivered' | 'gone'>;
}

const live = new Set(['Running', 'Pending', 'ContinuedAsNew', 'Suspended']);

export function durableScheduleEngine(client: () => DurableOperations): ScheduleEngine {
  return {
    async start(id, input) {
      try {
        await client().startNew(scheduleOrchestrator, id, input);
      } catch (err) {
        // Two creates racing on one id: the Durable API refuses the second start; follow the first.
        const status = await client()
          .runtimeStatus(id)
          .catch(() => undefined);
        if (status === undefined || !live.has(status)) throw err;
      }
    },
    status(id) {
      return client().runtimeStatus(id);
    },
    async wake(id) {
      try {
        return (await client().raiseEvent(id, wakeEvent, null)) === 'delivered';
      } catch {
        return false;
      }
    },
  };
}
