/** Gates ("release the hounds"): HTTP routes, the gate's orchestrations and activities. Logic lives in shared/gates. */
import * as df from 'durable-functions';

import { type ActionBatchInput, performActionBatch } from '../shared/gates/actionRunner';
import { announce, announceRelease, findOpened } from '../shared/gates/activities';
import {
  bindGateDurableClient,
  defaultGateRouteDeps,
  getActionDeps,
  getAnnounceDeps,
  getGateService,
  getOpenedDeps,
} from '../shared/gates/defaults';
import { gateGenerationOrchestrator } from '../shared/gates/generation.orchestrator';
import { gateLateActionsOrchestrator } from '../shared/gates/late.orchestrator';
import type { AnnounceInput, OpenedInput, ReleaseFollowUp, ScheduledReleaseInput } from '../shared/gates/messages';
import { gateFunctions } from '../shared/gates/names';
import { gateReleaseOrchestrator } from '../shared/gates/release.orchestrator';
import { gatesRoutes } from '../shared/gates/routes';
import { durableClientOf, latestDurableClient, withDurableClient } from './_durable';
import { registerRoutes } from './_http';

bindGateDurableClient(latestDurableClient);

registerRoutes(gatesRoutes(defaultGateRouteDeps), withDurableClient);

df.app.orchestration(gateFunctions.release, gateReleaseOrchestrator);
df.app.orchestration(gateFunctions.generation, gateGenerationOrchestrator);
df.app.orchestration(gateFunctions.lateActions, gateLateActionsOrchestrator);

df.app.activity(gateFunctions.announceRelease, { handler: (input: ReleaseFollowUp) => announceRelease(getAnnounceDeps(), input) });
df.app.activity(gateFunctions.opened, { handler: (input: OpenedInput) => findOpened(getOpenedDeps(), input) });
df.app.activity(gateFunctions.announce, { handler: (input: AnnounceInput) => announce(getAnnounceDeps(), input) });
df.app.activity(gateFunctions.actions, { handler: (input: ActionBatchInput) => performActionBatch(getActionDeps(), input) });
// A scheduled release may start the release orchestration, so it needs the Durable client.
df.app.activity(gateFunctions.scheduledRelease, {
  extraInputs: [df.input.durableClient()],
  handler: (input: ScheduledReleaseInput, context) => {
    durableClientOf(context);
    return getGateService().scheduledRelease(input);
  },
});
