/** Schedules: the orchestration, its activities and the reconcile timer; the logic lives in shared/schedules. */
import { app } from '@azure/functions';
import * as df from 'durable-functions';

import { scheduleActivities, scheduleOrchestrator } from '../shared/schedules/names';
import type { CheckpointInput, PollInput, RunInput } from '../shared/schedules/records';
import { scheduleOrchestratorHandler } from '../shared/schedules/schedule.orchestrator';
import { registration, theApp } from './_app';
import { durableClientOf } from './_durable';

df.app.orchestration(scheduleOrchestrator, scheduleOrchestratorHandler);
df.app.activity(scheduleActivities.run, {
  // A gateRelease target goes through the gates capability, which needs a Durable client.
  extraInputs: [df.input.durableClient()],
  handler: (input: RunInput, context) => theApp().schedules.activities(durableClientOf(context)).run(input),
});
df.app.activity(scheduleActivities.poll, { handler: (input: PollInput) => theApp().schedules.activities().poll(input) });
df.app.activity(scheduleActivities.checkpoint, {
  handler: (input: CheckpointInput) => theApp().schedules.activities().checkpoint(input),
});

app.timer('schedulesReconcile', {
  // Read when the app loads (the host needs the schedule to index the function); validated there.
  schedule: registration.schedules.reconcileSchedule,
  extraInputs: [df.input.durableClient()],
  handler: async (_timer, context) => {
    await theApp().schedules.service(durableClientOf(context)).reconcile();
  },
});
