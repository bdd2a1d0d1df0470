/** Gates ("release the hounds"): HTTP routes, the gate entity, its orchestrations and activities. Logic lives in shared/gates. */
import * as df from 'durable-functions';

import { announce, notifyWaiters, performAction } from '../shared/gates/activities';
import { bindGateDurableClient, defaultGateRouteDeps, getActionDeps, getAnnounceDeps } from '../shared/gates/defaults';
import { gateEntity } from '../shared/gates/gate.entity';
import { gateGenerationOrchestrator } from '../shared/gates/generation.orchestrator';
import type { ActionInput, AnnounceInput, NotifyInput } from '../shared/gates/messages';
import { gateFunctions } from '../shared/gates/names';
import { gateReleaseOrchestrator } from '../shared/gates/release.orchestrator';
import { gatesRoutes } from '../shared/gates/routes';
import { gateRunOrchestrator } from '../shared/gates/run.orchestrator';
import { durableClientOf, latestDurableClient, withDurableClient } from './_durable';
import { registerRoutes } from './_http';

bindGateDurableClient(latestDurableClient);

registerRoutes(gatesRoutes(defaultGateRouteDeps), withDurableClient);

df.app.entity(gateFunctions.entity, gateEntity);
df.app.orchestration(gateFunctions.run, gateRunOrchestrator);
df.app.orchestration(gateFunctions.release, gateReleaseOrchestrator);
df.app.orchestration(gateFunctions.generation, gateGenerationOrchestrator);

df.app.activity(gateFunctions.notify, {
  extraInputs: [df.input.durableClient()],
  handler: (input: NotifyInput, context) => notifyWaiters(durableClientOf(context), input),
});
df.app.activity(gateFunctions.announce, { handler: (input: AnnounceInput) => announce(getAnnounceDeps(), input) });
df.app.activity(gateFunctions.action, { handler: (input: ActionInput) => performAction(getActionDeps(), input) });
