/** Gates ("release the hounds"): the gate entity, its orchestrations and activities. Logic lives in shared/gates. */
import * as df from 'durable-functions';

import { gateEntity } from '../shared/gates/gate.entity';
import { gateGenerationOrchestrator } from '../shared/gates/generation.orchestrator';
import type { ActionInput, AnnounceInput, NotifyInput } from '../shared/gates/messages';
import { gateFunctions } from '../shared/gates/names';
import { gateReleaseOrchestrator } from '../shared/gates/release.orchestrator';
import { gateRunOrchestrator } from '../shared/gates/run.orchestrator';
import { invocationClient, theApp } from './_app';

df.app.entity(gateFunctions.entity, gateEntity);
df.app.orchestration(gateFunctions.run, gateRunOrchestrator);
df.app.orchestration(gateFunctions.release, gateReleaseOrchestrator);
df.app.orchestration(gateFunctions.generation, gateGenerationOrchestrator);

df.app.activity(gateFunctions.notify, {
  extraInputs: [df.input.durableClient()],
  handler: (input: NotifyInput, context) => theApp().gates.notify(invocationClient(context), input),
});
df.app.activity(gateFunctions.announce, { handler: (input: AnnounceInput) => theApp().gates.announce(input) });
df.app.activity(gateFunctions.action, { handler: (input: ActionInput) => theApp().gates.act(input) });
