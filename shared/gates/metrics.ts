/**
 * The gates capability's telemetry. A release is one trace: the release call's span, the pushes to
 * the waiting runs (each notify batch) and the actions the runs then perform carry its trace context
 * in the release event and the action's input.
 */
import { releaseHows } from './operations';
import { appId, callerName, counter, declareTelemetry, gauge, histogram, latencyBuckets, oneOf, span } from '../telemetry/declare';

const gate = { 'tallyho.gate.name': callerName('gate') };

export const gateTelemetry = declareTelemetry(
  'tallyho.gates',
  {
    waiting: gauge({
      name: 'tallyho.gate.runs.waiting',
      unit: '{run}',
      description: 'Runs waiting for the gate, as its latest read or change on this instance found them.',
      attributes: gate,
    }),
    releases: counter({
      name: 'tallyho.gate.releases',
      unit: '{release}',
      description: 'Releases announced (by the API or a scheduled release).',
      attributes: { ...gate, 'tallyho.gate.release.how': oneOf(...releaseHows) },
    }),
    fanout: histogram({
      name: 'tallyho.gate.release.fanout.duration',
      unit: 's',
      description: 'From a release to its event reaching a waiting run, per run; the largest is the fan-out time (release to last run).',
      attributes: gate,
      boundaries: latencyBuckets,
    }),
    actions: counter({
      name: 'tallyho.gate.run.actions',
      unit: '{action}',
      description: "Released runs' actions performed, by type and outcome (a failed one is retried by Durable, then fails the run).",
      attributes: { 'tallyho.gate.action.type': oneOf('enqueue', 'job'), 'tallyho.outcome': oneOf('succeeded', 'failed') },
    }),
  },
  {
    release: span({ name: 'tallyho.gate.release', description: 'A release requested through the API.', attributes: gate }),
    notify: span({
      name: 'tallyho.gate.notify',
      description: 'One batch of the release pushed to waiting runs.',
      attributes: { ...gate, 'tallyho.gate.generation': appId },
    }),
    action: span({
      name: 'tallyho.gate.run.action',
      description: "A released run's action.",
      attributes: { ...gate, 'tallyho.gate.action.type': oneOf('enqueue', 'job') },
    }),
  },
);
