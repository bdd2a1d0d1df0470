/**
 * The sequences capability's telemetry. Numbers are handed out from memory at a million a second, so
 * the counts are read from the allocators' own tallies when a reader collects (observables), and the
 * hot path records nothing.
 */
import { callerName, declareTelemetry, histogram, latencyBuckets, observableCounter, oneOf } from '../telemetry/declare';

const sequence = { 'tallyho.sequence.name': callerName('sequence') };

export const sequenceTelemetry = declareTelemetry('tallyho.sequences', {
  issued: observableCounter({
    name: 'tallyho.sequence.numbers.issued',
    unit: '{number}',
    description: 'Numbers this instance handed out.',
    attributes: sequence,
  }),
  reservations: observableCounter({
    name: 'tallyho.sequence.block.reservations',
    unit: '{block}',
    description: 'Blocks of numbers reserved with a conditional write.',
    attributes: sequence,
  }),
  retries: observableCounter({
    name: 'tallyho.sequence.write.retries',
    unit: '{retry}',
    description: 'Conditional writes that lost to another instance (412) and were retried.',
    attributes: sequence,
  }),
  reservationDuration: histogram({
    name: 'tallyho.sequence.block.reservation.duration',
    unit: 's',
    description: 'Time to reserve a block, retries included; `tallyho.outcome` failed when the waiters got a 503.',
    attributes: { ...sequence, 'tallyho.outcome': oneOf('reserved', 'failed') },
    boundaries: latencyBuckets,
  }),
});
