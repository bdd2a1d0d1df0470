/**
 * The gate's HTTP ETag, derived from everything a reader can see change: generation, state, the
 * schedule, the release and the waiter counts. Any change of the view changes the tag (Unleash #11281:
 * a change that did not move the revision left pollers stale), and equal views give equal tags on
 * every instance, so `If-None-Match` works behind a load balancer.
 */
import { createHash } from 'node:crypto';

import type { GateSnapshot } from './operations';

export function gateEtag(gate: GateSnapshot): string {
  const canonical = JSON.stringify([
    gate.name,
    gate.generation,
    gate.state,
    gate.createdAt,
    gate.generationStartedAt,
    gate.releaseAt,
    gate.release === null ? null : [gate.release.generation, gate.release.at, gate.release.by, gate.release.how, gate.release.note ?? null],
    [gate.waiters.waiting, gate.waiters.registered, gate.waiters.late, gate.waiters.proceeded],
  ]);
  const digest = createHash('sha256').update(canonical).digest('base64url').slice(0, 16);
  return `"g${gate.generation}.${gate.state === 'released' ? 'r' : 'c'}.${digest}"`;
}

export { ifNoneMatchHits } from '../http/conditional';
