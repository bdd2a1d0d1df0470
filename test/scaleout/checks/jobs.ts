/**
 * Jobs across instances (docs/jobs.md):
 * - every item of every accepted job gets exactly one final result (one `r|<item>` row, tallies
 *   that add up to the items) — so nothing a killed instance was holding, a long poll's message
 *   included, is lost;
 * - no batch is held by two workers at once: a worker holds its items from the moment its lease
 *   answer arrives until the lease's `expiresAt` (moved by each extension) or the sending of a
 *   completion that may have taken effect; no other lease of the same item may arrive inside that
 *   window. (`expiresAt` is computed from a time taken before the queue receive, so it never ends
 *   later than the queue's own visibility: the check cannot accuse a correct run.) A completion
 *   may have taken effect when it was answered 200, and also when its answer was lost — no answer,
 *   or a 5xx from an instance (the front door's 502 for an instance killed mid-request): the
 *   instance may have recorded the results and put the `retry` items back, visible again after the
 *   retry delay (shared/jobs/delivery/leases.ts `complete`), long before `expiresAt`. A refusal
 *   (4xx), or the front door's own 503 when no instance was up (no instance header), changed
 *   nothing, so the hold runs on to `expiresAt`.
 * - the open-jobs cap holds across instances: the jobs certainly open at one moment — from the
 *   submission's answer to the job's `completedAt` — never exceed TALLYHO_JOBS_MAX_OPEN; and once
 *   every job finished the capped set is empty;
 * - the lease-waiter cap holds on each instance: of a burst of lease requests on one instance, no
 *   more than TALLYHO_JOBS_MAX_LEASE_WAITERS are held at once; the others end early (their places go
 *   to a fairer share, which answers as a timeout does) or are refused;
 * - a processor change reaches every instance within its cache time (TALLYHO_JOBS_PROCESSOR_CACHE_SECONDS).
 */
import { capped, type CheckReport, invariant } from '../workload';

export interface AcceptedJob {
  readonly id: string;
  readonly items: readonly string[];
  /** When the first 202 for it arrived. */
  readonly answeredAt: number;
  /** From the job's final view. */
  readonly completedAt: number | undefined;
  readonly state: string | undefined;
  /** Items without a final result in that view (0 with the job unfinished: its completion is owed). */
  readonly pending?: number | undefined;
}

export interface StoredResults {
  readonly jobId: string;
  /** Item id → its result rows' statuses (one row per item when all is well). */
  readonly results: ReadonlyMap<string, readonly string[]>;
  /** The tallies' sum of final results. */
  readonly tallied: number;
}

export interface Lease {
  readonly worker: number;
  readonly instance: number | undefined;
  readonly jobId: string;
  readonly items: readonly string[];
  /** When the lease's answer arrived. */
  readonly receivedAt: number;
  /** The newest `expiresAt` (extensions move it). */
  readonly expiresAt: number;
  /** The completion, if one was sent: when, and its answer's status and instance (undefined: no answer). */
  readonly completion: Completion | undefined;
  /** When its request was sent, and the `expiresAt` it was granted with (for the report of a violation). */
  readonly requestedAt?: number;
  readonly grantedExpiresAt?: number;
  /** Which delivery of which message the lease holds (read from the lease id), and an extension's answer: for the report. */
  readonly message?: string;
  readonly extended?: number | 'no answer';
}

export interface Completion {
  readonly sentAt: number;
  readonly status: number | undefined;
  readonly instance: number | undefined;
}

/** Whether a completion may have taken effect (see the module comment): answered 200, or its answer lost. */
function mayHaveActed(c: Completion): boolean {
  return c.status === undefined || c.status === 200 || (c.status >= 500 && c.instance !== undefined);
}

function holdEnd(lease: Lease): number {
  return lease.completion !== undefined && mayHaveActed(lease.completion)
    ? Math.min(lease.expiresAt, lease.completion.sentAt)
    : lease.expiresAt;
}

/** A lease's times relative to `origin` (ms): asked, granted until (server), arrived, held until. */
function timesNote(lease: Lease, origin: number): string {
  const at = (t: number | undefined) => (t === undefined ? '?' : `${t - origin >= 0 ? '+' : ''}${t - origin}`);
  const extended = lease.extended === undefined ? '' : `, extension answered ${lease.extended}`;
  return `asked ${at(lease.requestedAt)}, granted until ${at(lease.grantedExpiresAt)}, arrived ${at(lease.receivedAt)}, expires ${at(lease.expiresAt)}${extended}, message ${lease.message ?? '?'}`;
}

function completionNote(lease: Lease): string {
  const c = lease.completion;
  if (c === undefined) return 'no completion';
  return `completion sent at +${c.sentAt - lease.receivedAt} ms answered ${c.status ?? 'nothing'} by instance ${c.instance ?? '?'}`;
}

export interface WaiterProbe {
  readonly instance: number;
  readonly sent: number;
  /**
   * Requests whose wait ran out (the app says so: Server-Timing `desc="timeout"`; each held its place
   * from its admission to its deadline, a wait after the request began) and answered within twice the
   * wait of the burst: each held its place for a span of about `wait` inside that window, so they
   * were all held at one moment (any two such spans overlap, and on a line intervals that overlap
   * pairwise share a point). A slow instance that admitted some only after others left answers those
   * later.
   */
  readonly heldTogether: number;
  readonly refused: number;
  /** The instance went down during the probe. */
  readonly lost: boolean;
}

interface ProcessorChange {
  /** When the change was answered. */
  readonly at: number;
  readonly cacheMs: number;
  /**
   * Answers certainly under the old declaration's lease time (extensions: a grant's lease may begin
   * before its request, so its time proves nothing old): when they were requested, by which instance.
   */
  readonly staleLeases: readonly { readonly requestedAt: number; readonly instance: number | undefined }[];
  /** Extensions requested more than the cache time after the change: those the check judged. */
  readonly extensionsJudged: number;
  /** Per instance, the first lease with the new declaration after the change (ms after it). */
  readonly firstNew: ReadonlyMap<number, number>;
}

export interface JobFacts {
  readonly accepted: readonly AcceptedJob[];
  readonly results: readonly StoredResults[];
  readonly leases: readonly Lease[];
  readonly maxOpen: number;
  readonly refusedFull: number;
  /** The capped set after every job finished: its count row and members. */
  readonly slots: { readonly count: number; readonly members: readonly string[] };
  readonly maxWaiters: number;
  readonly probes: readonly WaiterProbe[];
  readonly change: ProcessorChange | undefined;
  /** Lease requests cut off by a lost instance (no answer, or a 502). */
  readonly cutLongPolls: number;
  /** What the instances logged of batches found in two messages (shared/jobs/delivery/carriage.ts), when their output was kept. */
  readonly carriage?: CarriageEvents;
}

/** Batches a failure left in two messages, as the instances dealt with them: counted, so a run says whether a window was hit. */
export interface CarriageEvents {
  readonly copiesDropped: number;
  readonly notBoundYet: number;
  readonly handedOnAgain: number;
}

/** The carriage events in the instances' output (their JSON log lines). */
export function carriageEvents(outputs: readonly string[]): CarriageEvents {
  const count = (event: string): number => outputs.reduce((n, o) => n + o.split(`"event":"${event}"`).length - 1, 0);
  return {
    copiesDropped: count('jobs.batch_copy_dropped'),
    notBoundYet: count('jobs.batch_not_bound_yet'),
    handedOnAgain: count('jobs.batch_handed_on_again'),
  };
}

function resultsInvariant(facts: JobFacts) {
  const byJob = new Map(facts.results.map((r) => [r.jobId, r]));
  const violations: string[] = [];
  let items = 0;
  for (const job of facts.accepted) {
    const stored = byJob.get(job.id);
    items += job.items.length;
    if (stored === undefined) {
      violations.push(`job ${job.id}: no results stored`);
      continue;
    }
    for (const item of job.items) {
      const rows = stored.results.get(item) ?? [];
      if (rows.length !== 1 || rows[0] !== 'succeeded') violations.push(`job ${job.id} item ${item}: results [${rows.join(', ')}]`);
    }
    for (const item of stored.results.keys())
      if (!job.items.includes(item)) violations.push(`job ${job.id}: a result for unknown item ${item}`);
    if (stored.tallied !== job.items.length) violations.push(`job ${job.id}: tallies count ${stored.tallied} of ${job.items.length} items`);
    if (job.state !== 'completed')
      violations.push(
        `job ${job.id}: ended ${job.state ?? 'unread'}${job.pending === undefined ? '' : ` with ${job.pending} items pending`}`,
      );
  }
  return { violations, items };
}

function holdInvariant(leases: readonly Lease[]) {
  const byItem = new Map<string, Lease[]>();
  for (const lease of leases)
    for (const item of lease.items) byItem.set(`${lease.jobId}/${item}`, [...(byItem.get(`${lease.jobId}/${item}`) ?? []), lease]);
  const violations: string[] = [];
  for (const [item, held] of byItem) {
    held.sort((a, b) => a.receivedAt - b.receivedAt);
    for (let i = 1; i < held.length; i++) {
      const later = held[i] as Lease;
      for (const earlier of held.slice(0, i)) {
        const end = holdEnd(earlier);
        if (later.receivedAt < end)
          violations.push(
            `${item}: worker ${later.worker} got it ${end - later.receivedAt} ms before worker ${earlier.worker}'s hold ended ` +
              `(instances ${earlier.instance ?? '?'} and ${later.instance ?? '?'}; the first's ${completionNote(earlier)}; ` +
              `ms from the first's arrival — first: ${timesNote(earlier, earlier.receivedAt)}; second: ${timesNote(later, earlier.receivedAt)})`,
          );
      }
    }
  }
  return violations;
}

function openCapInvariant(facts: JobFacts) {
  const edges: [number, number][] = [];
  for (const job of facts.accepted)
    if (job.completedAt !== undefined && job.completedAt > job.answeredAt) edges.push([job.answeredAt, 1], [job.completedAt, -1]);
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let open = 0;
  let most = 0;
  for (const [, d] of edges) most = Math.max(most, (open += d));
  const violations: string[] = [];
  if (most > facts.maxOpen) violations.push(`${most} jobs were open at once; the cap is ${facts.maxOpen}`);
  if (facts.slots.count !== 0 || facts.slots.members.length !== 0)
    violations.push(
      `after every job finished the open-jobs set counts ${facts.slots.count} with members [${facts.slots.members.join(', ')}]`,
    );
  return { violations, most };
}

function waiterInvariant(facts: JobFacts) {
  const violations: string[] = [];
  for (const p of facts.probes) {
    if (p.lost) continue;
    if (p.heldTogether > facts.maxWaiters)
      violations.push(`instance ${p.instance} held ${p.heldTogether} lease requests at once; the cap is ${facts.maxWaiters}`);
  }
  return violations;
}

function changeInvariant(change: ProcessorChange | undefined): { violations: string[]; figures: Record<string, number> } {
  if (change === undefined) return { violations: [], figures: {} };
  const late = change.staleLeases.filter((l) => l.requestedAt > change.at + change.cacheMs);
  const firsts = [...change.firstNew.values()];
  return {
    violations: late.map(
      (l) => `instance ${l.instance ?? '?'} used the old declaration for a request sent ${l.requestedAt - change.at} ms after the change`,
    ),
    figures: {
      instancesSeen: change.firstNew.size,
      'extensions judged': change.extensionsJudged,
      'first new lease, slowest instance ms': firsts.length === 0 ? NaN : Math.max(...firsts),
      'last old answer requested ms after': Math.max(0, ...change.staleLeases.map((l) => l.requestedAt - change.at)),
    },
  };
}

export function checkJobs(facts: JobFacts): CheckReport {
  const results = resultsInvariant(facts);
  const holds = holdInvariant(facts.leases);
  const open = openCapInvariant(facts);
  const change = changeInvariant(facts.change);
  return {
    capability: 'jobs',
    invariants: [
      invariant('every item gets one final result (nothing a killed instance held is lost)', capped(results.violations), {
        jobs: facts.accepted.length,
        items: results.items,
        leases: facts.leases.length,
        cutLongPolls: facts.cutLongPolls,
      }),
      invariant('no batch held by two workers at once', capped(holds), {
        leases: facts.leases.length,
        completionsAnswerLost: facts.leases.filter(
          (l) => l.completion !== undefined && l.completion.status !== 200 && mayHaveActed(l.completion),
        ).length,
        ...(facts.carriage === undefined
          ? {}
          : {
              'copies dropped': facts.carriage.copiesDropped,
              'lane copies not bound yet': facts.carriage.notBoundYet,
              'handovers finished again': facts.carriage.handedOnAgain,
            }),
      }),
      invariant('the open-jobs cap holds across instances', open.violations, {
        cap: facts.maxOpen,
        mostOpenAtOnce: open.most,
        refusedFull: facts.refusedFull,
      }),
      invariant('the lease-waiter cap holds on every instance', capped(waiterInvariant(facts)), {
        cap: facts.maxWaiters,
        probes: facts.probes.length,
        mostHeldTogether: Math.max(0, ...facts.probes.map((p) => p.heldTogether)),
        refused: facts.probes.reduce((n, p) => n + p.refused, 0),
      }),
      invariant('a processor change reaches every instance within its cache time', capped(change.violations), change.figures),
    ],
  };
}
