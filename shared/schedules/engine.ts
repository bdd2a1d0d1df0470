/**
 * What the schedules capability needs from Durable Functions, as a port (tests can record calls):
 * `durableScheduleEngine` builds it on the Durable client of the invocation at hand.
 */
import type { DurableClient } from '../durable/client';
import { startSingleton } from '../durable/singleton';
import type { ScheduleState } from './machine';
import { scheduleOrchestrator, wakeEvent } from './names';

export interface ScheduleEngine {
  /** Starts the schedule's orchestration (instance id = schedule id); one started concurrently is success. */
  start(id: string, input: ScheduleState): Promise<void>;
  /** Asks the orchestration to read the index now. False when no instance took the event. */
  wake(id: string): Promise<boolean>;
  /** The orchestration's Durable runtime status (`Running`, `Failed`, …); undefined when there is none. */
  status(id: string): Promise<string | undefined>;
}

export function durableScheduleEngine(client: DurableClient): ScheduleEngine {
  return {
    async start(id, input) {
      await startSingleton(client, scheduleOrchestrator, id, input);
    },
    async status(id) {
      return (await client.getStatus(id))?.runtimeStatus;
    },
    async wake(id) {
      try {
        return (await client.raiseEvent(id, wakeEvent, null)) === 'delivered';
      } catch {
        return false;
      }
    },
  };
}
