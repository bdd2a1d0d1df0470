/**
 * The gates capability's telemetry. A release is one trace: the release's span, then the batches of
 * the released runs' actions (each batch continues the traceparent the release orchestration was
 * started with) and each action within its batch. Runs without an action cost no work after the
 * release, so what a release lets go is recorded once, with the release, not per run.
 */
import { releaseHows } from './operations';
import { appId, callerName, counter, declareTelemetry, gauge, histogram, oneOf, span } from '../telemetry/declare';

const gate = { 'tallyho.gate.name': callerName('gate') };
const actionType = { 'tallyho.gate.action.type': oneOf('enqueue', 'job') };

export const gateTelemetry = declareTelemetry(
  'tallyho.gates',
  {
    waiting: gauge({
      name: 'tallyho.gate.runs.waiting',
      unit: '{run}',
      description:
        "Runs waiting: the sum over gates of each one's latest read on this instance (gates not read for five collections drop out). Per gate when caller names are exported.",
      attributes: gate,
      combine: 'sum',
    }),
    releases: counter({
      name: 'tallyho.gate.releases',
      unit: '{release}',
      description: 'Releases made (by the API, a scheduled release, or the release orchestration when its caller died first).',
      attributes: { ...gate, 'tallyho.gate.release.how': oneOf(...releaseHows) },
    }),
    released: histogram({
      name: 'tallyho.gate.release.runs',
      unit: '{run}',
      description:
        'Waiting runs one release let go, all at once (their state is derived from the release; only those with an action cost more work).',
      attributes: gate,
      boundaries: [0, 1, 10, 100, 1000, 10000],
    }),
    actions: counter({
      name: 'tallyho.gate.run.actions',
      unit: '{action}',
      description:
        "Released runs' action attempts, by type and outcome: succeeded, failed (recorded on the run), retried (a dependency was unavailable; the release orchestration tries again, then records it failed).",
      attributes: { ...actionType, 'tallyho.outcome': oneOf('succeeded', 'failed', 'retried') },
    }),
  },
  {
    release: span({ name: 'tallyho.gate.release', description: 'A release (through the API or scheduled).', attributes: gate }),
    actions: span({
      name: 'tallyho.gate.actions',
      description: "One batch of released (or late) runs' actions, in the release's trace.",
      attributes: { ...gate, 'tallyho.gate.generation': appId },
    }),
    action: span({
      name: 'tallyho.gate.run.action',
      description: "A released run's action.",
      attributes: { ...gate, ...actionType },
    }),
  },
);
