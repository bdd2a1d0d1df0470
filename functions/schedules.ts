/** Schedules: the HTTP API, the orchestration and its activities, registered; the logic lives in shared/schedules. */
import { app } from '@azure/functions';
import * as df from 'durable-functions';

import { scheduleSettings } from '../shared/config';
import { getScheduleActivities, scheduleService } from '../shared/schedules/defaults';
import { durableScheduleEngine } from '../shared/schedules/engine';
import { scheduleActivities, scheduleOrchestrator } from '../shared/schedules/names';
import type { CheckpointInput, PollInput, RunInput } from '../shared/schedules/records';
import { schedulesRoutes } from '../shared/schedules/routes';
import { scheduleOrchestratorHandler } from '../shared/schedules/schedule.orchestrator';
import { durableClientOf, latestDurableClient, withDurableClient } from './_durable';
import { registerRoutes } from './_http';

const engine = durableScheduleEngine(latestDurableClient);

registerRoutes(schedulesRoutes({ service: () => scheduleService(engine) }), withDurableClient);

df.app.orchestration(scheduleOrchestrator, scheduleOrchestratorHandler);
df.app.activity(scheduleActivities.run, {
  // A gateRelease target goes through the gates capability, which needs a Durable client.
  extraInputs: [df.input.durableClient()],
  handler: (input: RunInput, context) => {
    durableClientOf(context);
    return getScheduleActivities().run(input);
  },
});
df.app.activity(scheduleActivities.poll, { handler: (input: PollInput) => getScheduleActivities().poll(input) });
df.app.activity(scheduleActivities.checkpoint, { handler: (input: CheckpointInput) => getScheduleActivities().checkpoint(input) });

app.timer('schedulesReconcile', {
  // Read when the app loads (the host needs the schedule to index the function); validated there.
  schedule: scheduleSettings().reconcileSchedule,
  extraInputs: [df.input.durableClient()],
  handler: async (_timer, context) => {
    durableClientOf(context);
    await scheduleService(engine).reconcile();
  },
});
