/**
 * The counters capability's telemetry: increments as they are acknowledged, and how far the rollup is
 * behind. Increments come thousands a second, so they are tallied in memory and read when a reader
 * collects (an observable): an increment costs a map update, not the SDK's work per record.
 */
import { callerName, counter, declareTelemetry, gauge, observableCounter, oneOf } from '../telemetry/declare';
import type { CounterMode } from './definition';

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
    description:
      "Hits not folded yet: the sum over counters of each one's latest read on this instance (counters not read for five collections drop out). Per counter when caller names are exported.",
    attributes: name,
    combine: 'sum',
  }),
  rollupFailures: counter({
    name: 'tallyho.counter.rollup.failures',
    unit: '{partition}',
    description: 'Partitions a rollup run could not fold (they are retried by the next run).',
  }),
});

/**
 * Increments acknowledged in this process per counter and mode, read when a reader collects. One
 * entry per counter incremented here: bounded by the counters there can be (created ones and
 * TALLYHO_COUNTERS_MAX_AUTO_CREATED).
 */
export class IncrementTally {
  private readonly tallies = new Map<string, { readonly name: string; readonly mode: CounterMode; count: number }>();

  add(name: string, mode: CounterMode): void {
    // Caller names never hold `|` (shared/names.ts), so the key is unambiguous.
    const key = `${mode}|${name}`;
    const tally = this.tallies.get(key);
    if (tally === undefined) this.tallies.set(key, { name, mode, count: 1 });
    else tally.count++;
  }

  report(observe: (count: number, attributes: { 'tallyho.counter.name': string; 'tallyho.counter.mode': CounterMode }) => void): void {
    for (const t of this.tallies.values()) observe(t.count, { 'tallyho.counter.name': t.name, 'tallyho.counter.mode': t.mode });
  }
}
