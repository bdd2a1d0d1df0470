/** Gates ("release the hounds"): the gate's orchestrations and activities. Logic lives in shared/gates. */
import * as df from 'durable-functions';

import type { ActionBatchInput } from '../shared/gates/actionRunner';
import { gateGenerationOrchestrator } from '../shared/gates/generation.orchestrator';
import { gateLateActionsOrchestrator } from '../shared/gates/late.orchestrator';
import type { AnnounceInput, FanOutStateInput, OpenedInput, ReleaseFollowUp, ScheduledReleaseInput } from '../shared/gates/messages';
import { gateFunctions } from '../shared/gates/names';
import { gateReleaseOrchestrator } from '../shared/gates/release.orchestrator';
import { theApp } from './_app';
import { durableClientOf } from './_durable';

df.app.orchestration(gateFunctions.release, gateReleaseOrchestrator);
df.app.orchestration(gateFunctions.generation, gateGenerationOrchestrator);
df.app.orchestration(gateFunctions.lateActions, gateLateActionsOrchestrator);

df.app.activity(gateFunctions.announceRelease, { handler: (input: ReleaseFollowUp) => theApp().gates.activities.announceRelease(input) });
df.app.activity(gateFunctions.opened, { handler: (input: OpenedInput) => theApp().gates.activities.opened(input) });
df.app.activity(gateFunctions.announce, { handler: (input: AnnounceInput) => theApp().gates.activities.announce(input) });
df.app.activity(gateFunctions.actions, { handler: (input: ActionBatchInput) => theApp().gates.activities.actions(input) });
df.app.activity(gateFunctions.fanOutState, { handler: (input: FanOutStateInput) => theApp().gates.activities.fanOutState(input) });
// A scheduled release may start the release orchestration, so it takes the Durable client.
df.app.activity(gateFunctions.scheduledRelease, {
  extraInputs: [df.input.durableClient()],
  handler: (input: ScheduledReleaseInput, context) => theApp().gates.activities.scheduledRelease(durableClientOf(context), input),
});
