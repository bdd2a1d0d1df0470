/**
 * The counters capability's telemetry: increments as they are acknowledged, and how far the rollup is
 * behind. Increments come thousands a second, so they are tallied in memory and read when a reader
 * collects (an observable): an increment costs a map update, not the SDK's work per record.
 */
import { callerName, counter, declareTelemetry, gauge, observableCounter, oneOf } from '../telemetry/declare';

const name = { 'tallyho.counter.name': callerName('counter') };

export const counterTelemetry = declareTelemetry('tallyho.counters', {
  increments: observableCounter({
    name: 'tallyho.counter.increments',
    unit: '{increment}',
    description: 'Increments acknowledged (stored), replays of an Idempotency-Key excluded.',
    attributes: { ...name, 'tallyho.counter.mode': oneOf('hits', 'sharded') },
  }),
  rollupLag: gauge({
    name: 'tallyho.counter.rollup.lag',
    unit: 's',
    description:
      'At each rollup run, the age of the oldest minute with hits not yet folded (0: none). About the safety window plus a minute while the rollup keeps up; it grows when it does not.',
  }),
  folded: counter({
    name: 'tallyho.counter.rollup.hits.folded',
    unit: '{hit}',
    description: 'Hit rows folded into partition totals by the rollup.',
  }),
  pending: gauge({
    name: 'tallyho.counter.hits.pending',
    unit: '{hit}',
    description: 'Hits not folded yet, as the latest read of a counter counted them individually.',
    attributes: name,
  }),
  rollupFailures: counter({
    name: 'tallyho.counter.rollup.failures',
    unit: '{partition}',
    description: 'Partitions a rollup run could not fold (they are retried by the next run).',
  }),
});
