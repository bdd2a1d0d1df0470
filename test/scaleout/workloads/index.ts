/** Every capability's workload; the devhost runs those that need no Durable across instances (cluster.ts). */
import type { HostKind } from '../cluster';
import type { Workload } from '../workload';
import { countersWorkload } from './counters';
import { durableWorkload } from './durable';
import { gatesWorkload } from './gates';
import { jobsWorkload } from './jobs';
import { schedulesWorkload } from './schedules';
import { sequencesWorkload } from './sequences';
import { streamsWorkload } from './streams';

/**
 * The workloads of a run: every capability the host can run across instances, and on the real host
 * the Durable probe too unless `probe` is false (it measures; it checks nothing of the app).
 */
export function workloadsFor(kind: HostKind, options: { only?: readonly string[]; probe?: boolean } = {}): Workload[] {
  const only = options.only;
  const all: Workload[] = [
    sequencesWorkload(),
    countersWorkload(),
    gatesWorkload(),
    jobsWorkload(),
    schedulesWorkload(),
    streamsWorkload(),
    durableWorkload(),
  ];
  const devhostOnes = new Set(['sequences', 'counters', 'gates', 'jobs']);
  return all.filter(
    (w) =>
      (kind === 'real' || devhostOnes.has(w.capability)) &&
      (only === undefined || only.includes(w.capability)) &&
      (w.capability !== 'durable' || options.probe !== false),
  );
}
