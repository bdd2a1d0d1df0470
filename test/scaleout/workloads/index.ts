/** Every capability's workload; the devhost runs those that need no Durable across instances (cluster.ts). */
import type { HostKind } from '../cluster';
import type { Workload } from '../workload';
import { countersWorkload } from './counters';
import { gatesWorkload } from './gates';
import { jobsWorkload } from './jobs';
import { sequencesWorkload } from './sequences';

export function workloadsFor(kind: HostKind, only?: readonly string[]): Workload[] {
  const all: Workload[] = [sequencesWorkload(), countersWorkload(), gatesWorkload(), jobsWorkload()];
  const devhostOnes = new Set(['sequences', 'counters', 'gates', 'jobs']);
  return all.filter((w) => (kind === 'real' || devhostOnes.has(w.capability)) && (only === undefined || only.includes(w.capability)));
}
