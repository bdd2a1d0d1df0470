/**
 * The schedules capability's telemetry: how late each scheduled fire ran, and how runs ended. Both are
 * recorded by the run activity (orchestrations are replayed and record nothing), on the
 * orchestration's clock, so a devhost virtual clock measures the same thing.
 */
import { callerName, counter, declareTelemetry, histogram, latencyBuckets, oneOf, span } from '../telemetry/declare';

const schedule = { 'tallyho.schedule.id': callerName('schedule') };
const target = { 'tallyho.schedule.target.type': oneOf('gateRelease', 'job', 'queueMessage', 'serviceBus', 'webhook') };

export const scheduleTelemetry = declareTelemetry(
  'tallyho.schedules',
  {
    lateness: histogram({
      name: 'tallyho.schedule.lateness',
      unit: 's',
      description: 'From the time a fire was due to its run starting (scheduled and catch-up fires; a "trigger now" is not late).',
      attributes: schedule,
      boundaries: latencyBuckets,
    }),
    runs: counter({
      name: 'tallyho.schedule.runs',
      unit: '{run}',
      description:
        'Runs by outcome: succeeded, failed, started (a job, finished later), refused (cancelled or paused first), skipped or missed (overlap and catch-up policies).',
      attributes: {
        ...schedule,
        ...target,
        'tallyho.outcome': oneOf('succeeded', 'failed', 'started', 'refused', 'skipped', 'missed'),
      },
    }),
  },
  {
    run: span({ name: 'tallyho.schedule.run', description: "One run of a schedule's target.", attributes: { ...schedule, ...target } }),
  },
);
