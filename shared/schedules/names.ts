/** Durable names of the schedules capability, defined once. */
export const scheduleOrchestrator = 'scheduleOrchestrator';

export const scheduleActivities = {
  /** Claims a fire in the index, runs the target, records the outcome. */
  run: 'scheduleRun',
  /** Asks a target that completes later (a job) whether it has. */
  poll: 'scheduleRunPoll',
  /** Writes skips, misses and the next fire time; returns the index's control state. */
  checkpoint: 'scheduleCheckpoint',
} as const;

/** The one external event: "the index changed, read it". Its payload is never trusted. */
export const wakeEvent = 'wake';
