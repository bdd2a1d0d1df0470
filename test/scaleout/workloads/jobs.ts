/**
 * Jobs for an external processor, worked by lease-taking workers through the front door:
 * submitters keep the open-jobs cap (6 here) full, four workers long-poll for leases (some extend
 * theirs, some abandon theirs, a few ask for a retry of an item), a probe bursts lease requests at
 * each instance to find its waiter cap (8 here), and half-way the processor's declaration changes
 * (a lease time of 10 s becomes 12 s) to time how fast every instance sees it.
 */
import { randomBytes } from 'node:crypto';

import { readLease } from '../../../shared/jobs/delivery/leaseId';

import {
  type AcceptedJob,
  carriageEvents,
  checkJobs,
  type Completion,
  type Lease,
  type StoredResults,
  type WaiterProbe,
} from '../checks/jobs';
import { sleep, untilAnswered } from '../history';
import { int, tableRows } from '../storage';
import { randomInt, type RunContext, type Workload } from '../workload';

const processor = 'so-work';
const probeProcessor = 'so-probe';
const maxOpen = 6;
const maxWaiters = 8;
const cacheMs = 5_000;
const oldLeaseSeconds = 10;
const newLeaseSeconds = 12;
const itemsPerJob = 10;
const staleSeconds = 30;

interface LeaseAnswer {
  leaseId?: string;
  expiresAt?: string;
  leaseSeconds?: number;
  items?: { id: string; jobId: string; attempt: number }[];
}

interface State {
  readonly accepted: Map<string, { items: string[]; answeredAt: number }>;
  readonly leases: (Lease & { grantedExpiresAt: number; requestedAt: number })[];
  readonly probes: WaiterProbe[];
  /** Each extension's request and answer times, on this machine's clock, and the `expiresAt` it answered. */
  readonly extensions: { instance: number | undefined; sentAt: number; answeredAt: number; expiresAt: number }[];
  refusedFull: number;
  changeAt: number | undefined;
  workersStop: AbortController;
}

const declaration = (leaseSeconds: number) => ({
  type: 'external',
  batchSize: 5,
  leaseSeconds,
  maxAttempts: 10,
  retry: { delaySeconds: 1, multiplier: 1, maxDelaySeconds: 1 },
});

async function submitter(ctx: RunContext, st: State, loop: number): Promise<void> {
  const tag = randomBytes(3).toString('hex');
  for (let n = 0; !ctx.loadEnded.aborted; n++) {
    const items = Array.from({ length: itemsPerJob }, (_, k) => ({ id: `i${k}`, n: k }));
    const key = `so-job-${tag}-${loop}-${n}`;
    while (!ctx.loadEnded.aborted) {
      const { op, reply } = await ctx.client.call<{ id?: string }>('jobs', 'submit', 'POST', '/api/jobs', {
        body: { processor, items },
        headers: { 'idempotency-key': key },
        data: { key },
      });
      if (reply?.status === 202 && reply.body.id !== undefined) {
        if (!st.accepted.has(reply.body.id))
          st.accepted.set(reply.body.id, { items: items.map((i) => i.id), answeredAt: op.end ?? Date.now() });
        break;
      }
      if (reply?.status === 429) st.refusedFull++;
      await sleep(reply?.status === 429 ? 500 : 200);
    }
  }
}

/** Which delivery of which message a lease holds, for a report of two holders (one message, or two copies of a batch). */
function messageOf(leaseId: string): string | undefined {
  try {
    const lease = readLease(leaseId);
    return lease === undefined
      ? undefined
      : `${lease.queue}/${lease.messageId} delivery ${lease.delivery} receipt …${lease.popReceipt.slice(-6)}`;
  } catch {
    return undefined;
  }
}

async function work(
  ctx: RunContext,
  st: State,
  worker: number,
  answer: LeaseAnswer,
  requestedAt: number,
  instance: number | undefined,
): Promise<void> {
  const items = answer.items ?? [];
  const first = items[0];
  if (answer.leaseId === undefined || answer.expiresAt === undefined || first === undefined) return;
  const lease = {
    worker,
    instance,
    jobId: first.jobId,
    items: items.map((i) => i.id),
    receivedAt: Date.now(),
    expiresAt: Date.parse(answer.expiresAt),
    completion: undefined as Completion | undefined,
    grantedExpiresAt: Date.parse(answer.expiresAt),
    requestedAt,
    message: messageOf(answer.leaseId),
    extended: undefined as number | 'no answer' | undefined,
  };
  st.leases.push(lease);
  // Abandoned: the worker "dies" holding it; its items come back once the lease runs out.
  if (Math.random() < 0.05) return;
  let leaseId = answer.leaseId;
  await sleep(randomInt(50, 300));
  if (Math.random() < 0.2) {
    const { reply, op } = await ctx.client.call<{ leaseId?: string; expiresAt?: string }>(
      'jobs',
      'extend',
      'POST',
      `/api/leases/${leaseId}/extend`,
    );
    lease.extended = reply?.status ?? 'no answer';
    if (reply?.status !== 200 || reply.body.leaseId === undefined || reply.body.expiresAt === undefined) return;
    leaseId = reply.body.leaseId;
    lease.expiresAt = Date.parse(reply.body.expiresAt);
    st.extensions.push({ instance: op.instance, sentAt: op.start, answeredAt: op.end ?? Date.now(), expiresAt: lease.expiresAt });
    await sleep(randomInt(50, 300));
  }
  const results = items.map((i) =>
    Math.random() < 0.05
      ? { id: i.id, status: 'retry', reason: 'scale-out test retry' }
      : { id: i.id, status: 'succeeded', output: { worker } },
  );
  const sentAt = Date.now();
  const { op } = await ctx.client.call('jobs', 'complete', 'POST', `/api/leases/${leaseId}/complete`, { body: { results } });
  // Whatever the answer: the checker tells a refusal from an answer that was lost (checks/jobs.ts).
  lease.completion = { sentAt, status: op.status, instance: op.instance };
}

async function worker(ctx: RunContext, st: State, index: number): Promise<void> {
  while (!st.workersStop.signal.aborted) {
    const requestedAt = Date.now();
    const { op, reply } = await ctx.client.call<LeaseAnswer>('jobs', 'lease', 'POST', `/api/processors/${processor}/leases`, {
      body: { wait: 5, maxItems: 5 },
      timeoutMs: 30_000,
    });
    if (reply?.status === 200) await work(ctx, st, index, reply.body, requestedAt, op.instance);
    else if (reply?.status !== 204) await sleep(500);
  }
}

/** A burst of cap + 3 lease requests at each instance at once, on a processor with nothing queued. */
async function probeWaiters(ctx: RunContext, st: State): Promise<void> {
  const sent = maxWaiters + 3;
  const waitMs = 5_000;
  await Promise.all(
    Array.from({ length: ctx.instances }, async (_, instance) => {
      if (!ctx.isUp(instance)) return;
      const burst = Date.now();
      const answers = await Promise.all(
        Array.from({ length: sent }, () =>
          ctx.client.call('jobs', 'probe', 'POST', `/api/processors/${probeProcessor}/leases`, {
            instance,
            body: { wait: waitMs / 1000 },
            timeoutMs: 30_000,
          }),
        ),
      );
      const statuses = answers.map((a) => a.reply?.status);
      st.probes.push({
        instance,
        sent,
        // Held at once: waits that ran out (their Server-Timing says `timeout`: each held its place to
        // its deadline), answered within two waits of the burst, so each held its place across burst +
        // wait. A wait that lost its place to a fairer share says `preempted` (the lease waiters
        // pre-empt: docs/security.md, "Fair shares") and was not held then. How long it took says
        // nothing of that: run 10 of 2026-11-29 counted 11 "held" by duration (cap 8) when a machine
        // stall of 5–7 s (every function of all three instances, and the hosts' own storage calls,
        // took that long) stretched answers that had lost their places at once. A slow machine can
        // only count fewer, so the cap check never fails for slowness.
        heldTogether: answers.filter((a) => {
          const end = a.op.end ?? Infinity;
          const how = /;desc="([a-z]+)"/.exec(a.reply?.headers.get('server-timing') ?? '')?.[1];
          // eslint-disable-next-line tallyho/no-elapsed-budget
          return a.reply?.status === 204 && how === 'timeout' && end - burst < 2 * waitMs;
        }).length,
        refused: statuses.filter((s) => s === 429).length,
        lost: statuses.some((s) => s === undefined || s >= 500),
      });
    }),
  );
}

async function changeDeclaration(ctx: RunContext, st: State, afterMs: number): Promise<void> {
  await sleep(afterMs, ctx.loadEnded);
  if (ctx.loadEnded.aborted) return;
  const reply = await untilAnswered(
    () => ctx.client.call('jobs', 'declare', 'PUT', `/api/processors/${processor}`, { key: 'admin', body: declaration(newLeaseSeconds) }),
    Date.now() + 30_000,
  );
  if (reply?.status === 200) st.changeAt = Date.now();
}

interface JobView {
  state?: string;
  totals?: { pending?: number };
  timings?: { completedAt?: string | null };
}

async function jobView(ctx: RunContext, id: string): Promise<JobView | undefined> {
  const reply = await untilAnswered(() => ctx.client.call<JobView>('jobs', 'read', 'GET', `/api/jobs/${id}`), Date.now() + 30_000);
  return reply?.status === 200 ? reply.body : undefined;
}

export function jobsWorkload(): Workload {
  const st: State = {
    accepted: new Map(),
    leases: [],
    extensions: [],
    probes: [],
    refusedFull: 0,
    changeAt: undefined,
    workersStop: new AbortController(),
  };
  let workers: Promise<void>[] = [];
  const views = new Map<string, JobView | undefined>();
  return {
    capability: 'jobs',
    settings: {
      TALLYHO_JOBS_MAX_OPEN: String(maxOpen),
      TALLYHO_JOBS_MAX_LEASE_WAITERS: String(maxWaiters),
      // A job whose finalizer was killed between its claim and the completed row is taken over by the
      // reconciler once the claim is stale (shared/jobs/ledger/completion.ts, submit/reconcile.ts): with
      // the defaults (120 s, a run each minute) up to 3 min after the kill, longer than the bounded
      // run's load and drain after it. The same takeover, on timings the drain covers.
      TALLYHO_JOBS_STALE_SECONDS: String(staleSeconds),
      TALLYHO_JOBS_RECONCILE_SCHEDULE: '*/10 * * * * *',
    },
    async setup(ctx) {
      for (const [name, leaseSeconds] of [
        [processor, oldLeaseSeconds],
        [probeProcessor, 60],
      ] as const) {
        const { reply } = await ctx.client.call('jobs', 'declare', 'PUT', `/api/processors/${name}`, {
          key: 'admin',
          body: declaration(leaseSeconds),
        });
        if (reply === undefined || reply.status >= 300) throw new Error(`Declaring processor ${name} answered ${reply?.status}`);
      }
    },
    async run(ctx) {
      workers = Array.from({ length: 4 * ctx.scale }, (_, i) => worker(ctx, st, i));
      const probing = (async () => {
        for (;;) {
          await sleep(randomInt(8_000, 15_000), ctx.loadEnded);
          if (ctx.loadEnded.aborted) return;
          await probeWaiters(ctx, st);
        }
      })();
      const submitting = Array.from({ length: 2 * ctx.scale }, (_, i) => submitter(ctx, st, i));
      await Promise.all([...submitting, probing, changeDeclaration(ctx, st, ctx.loadMs / 2)]);
    },
    async drain(ctx, deadline) {
      for (const id of st.accepted.keys()) {
        for (;;) {
          const view = await jobView(ctx, id);
          const finished = view?.state !== undefined && !['accepted', 'running', 'cancelling'].includes(view.state);
          if (finished || Date.now() > deadline) {
            views.set(id, view);
            break;
          }
          await sleep(1000);
        }
      }
      st.workersStop.abort();
      await Promise.all(workers);
    },
    async check(ctx, { lives }) {
      const accepted: AcceptedJob[] = [...st.accepted].map(([id, job]) => {
        const view = views.get(id);
        const completedAt = view?.timings?.completedAt;
        return {
          id,
          items: job.items,
          answeredAt: job.answeredAt,
          completedAt: completedAt === null || completedAt === undefined ? undefined : Date.parse(completedAt),
          state: view?.state,
          pending: view?.totals?.pending,
        };
      });
      const results: StoredResults[] = [];
      for (const id of st.accepted.keys()) {
        const rows = await tableRows(ctx.storage, 'jobresults', `PartitionKey eq '${id}'`);
        const byItem = new Map<string, string[]>();
        let tallied = 0;
        for (const row of rows) {
          if (row.rowKey.startsWith('r|')) byItem.set(row.rowKey.slice(2), [...(byItem.get(row.rowKey.slice(2)) ?? []), String(row.s)]);
          else if (row.rowKey.startsWith('t|')) tallied += int(row.s) + int(row.f) + int(row.c ?? 0);
        }
        results.push({ jobId: id, results: byItem, tallied });
      }
      const slotRows = await tableRows(ctx.storage, 'jobs', `PartitionKey eq '|slots'`);
      const lost = ctx.history.of('jobs', 'lease').filter((o) => o.status === undefined || o.status === 502).length;
      // The declaration an answer was given under, from its `expiresAt`. An extension's is its time on
      // the instance plus the lease time, and that time lies between the request's sending and the
      // answer's arrival: a lease time below the midpoint even from the sending time is certainly the
      // old one, one above it even from the arrival certainly the new one. A grant's lease began at the
      // receive that took its message, which may have begun before the request was sent (a request
      // that joins a receive under way takes what it brings): only the second bound holds for it, so
      // grants tell when an instance first used the new declaration, and extensions whether any used
      // the old one late. (Run 10 of 2026-11-29 counted a grant "old" 246 s after the change: its
      // receive had begun over a second before its request, in a machine stall of 5–7 s.)
      const mid = ((oldLeaseSeconds + newLeaseSeconds) / 2) * 1000;
      const stale = st.extensions.filter((e) => e.expiresAt - e.sentAt < mid);
      const answers = [
        ...st.leases.map((l) => ({ instance: l.instance, at: l.receivedAt, expiresAt: l.grantedExpiresAt })),
        ...st.extensions.map((e) => ({ instance: e.instance, at: e.answeredAt, expiresAt: e.expiresAt })),
      ].sort((a, b) => a.at - b.at);
      const { changeAt } = st;
      const firstNew = new Map<number, number>();
      if (changeAt !== undefined)
        for (const a of answers)
          if (a.instance !== undefined && a.expiresAt - a.at > mid && !firstNew.has(a.instance)) firstNew.set(a.instance, a.at - changeAt);
      return checkJobs({
        accepted,
        results,
        leases: st.leases,
        carriage: carriageEvents(lives.map((l) => l.output)),
        maxOpen,
        refusedFull: st.refusedFull,
        slots: {
          count: int(slotRows.find((r) => r.rowKey === 'count')?.n ?? 0),
          members: slotRows.filter((r) => r.rowKey.startsWith('m|')).map((r) => r.rowKey.slice(2)),
        },
        maxWaiters,
        probes: st.probes,
        change:
          changeAt === undefined
            ? undefined
            : {
                at: changeAt,
                cacheMs,
                staleLeases: stale.map((e) => ({ requestedAt: e.sentAt, instance: e.instance })),
                extensionsJudged: st.extensions.filter((e) => e.sentAt > changeAt + cacheMs).length,
                firstNew,
              },
        cutLongPolls: lost,
      });
    },
  };
}
