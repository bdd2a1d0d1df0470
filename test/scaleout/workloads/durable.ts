/**
 * How long Durable work waits when an instance dies (real host only). Two things are measured:
 * - lease takeover: the task hub's partition table (`<hub>Partitions`, DurableTask.AzureStorage's
 *   table partition manager) is read every 500 ms; after a kill, the time until every partition the
 *   dead worker owned has another owner;
 * - the work itself: probe streams, each appended to once a second (one with `ack=buffered`: a
 *   client signal to an entity, new work for the partition; one with `ack=flushed`: the flusher
 *   orchestration's round, whose messages are ordered and can be held up behind a message the dead
 *   instance had taken off its queue, invisible until `controlQueueVisibilityTimeout` ends). After a
 *   kill, per probe: how long from the kill until a request sent after it was answered.
 * The figures choose the host.json settings (docs/scale-out.md). One thing is an invariant of the app:
 * every probe is answered again after the last kill before the drain ends — the Durable work of a
 * dead instance resumes (docs/streams.md: a flush at the latest after the flusher's idle check).
 */
import { randomBytes } from 'node:crypto';

import { type Op, sleep } from '../history';
import { tableRows } from '../storage';
import { invariant, percentile, type RunContext, type Workload } from '../workload';

interface OwnerSample {
  readonly at: number;
  readonly owners: ReadonlyMap<string, string>;
}

interface Probe {
  readonly type: string;
  readonly ack: 'buffered' | 'flushed';
  /** Answered appends: when sent and when answered. */
  readonly answered: { sent: number; at: number }[];
}

async function probeLoop(ctx: RunContext, probe: Probe, stop: AbortSignal): Promise<void> {
  let seq = 0;
  while (!stop.aborted) {
    const events = [{ producer: 'probe', seq, data: { seq } }];
    for (;;) {
      const sent = Date.now();
      const { reply } = await ctx.client.call('durable', 'probe', 'POST', `/api/streams/${probe.type}/events?ack=${probe.ack}`, {
        body: { events },
        timeoutMs: 40_000,
        data: { type: probe.type },
      });
      if (reply?.status === 200 || reply?.status === 202) {
        probe.answered.push({ sent, at: Date.now() });
        break;
      }
      if (stop.aborted) return;
      await sleep(500);
    }
    seq++;
    await sleep(1000, stop);
  }
}

async function ownersLoop(ctx: RunContext, samples: OwnerSample[]): Promise<void> {
  const table = `${ctx.taskHub}Partitions`;
  while (!ctx.loadEnded.aborted) {
    try {
      const rows = await tableRows(ctx.storage, table);
      samples.push({
        at: Date.now(),
        owners: new Map(rows.map((r) => [r.rowKey, typeof r.CurrentOwner === 'string' ? r.CurrentOwner : ''])),
      });
    } catch {
      // The table may not exist yet.
    }
    await sleep(500, ctx.loadEnded);
  }
}

/** After a kill of `worker` at `at`: ms until each partition it owned has another owner (undefined: never seen). */
function takeover(samples: readonly OwnerSample[], worker: string, at: number): (number | undefined)[] {
  const before = samples.filter((s) => s.at <= at).at(-1);
  if (before === undefined) return [];
  const owned = [...before.owners].filter(([, owner]) => owner === worker).map(([p]) => p);
  return owned.map((p) => {
    const next = samples.find((s) => s.at > at && s.owners.get(p) !== worker && (s.owners.get(p) ?? '') !== '');
    return next === undefined ? undefined : next.at - at;
  });
}

/** After a kill at `at`: ms until a request sent after it was answered. */
function resumed(probe: Probe, at: number): number | undefined {
  const first = probe.answered.find((a) => a.sent >= at);
  return first === undefined ? undefined : first.at - at;
}

export function durableWorkload(): Workload {
  const tag = randomBytes(3).toString('hex');
  const samples: OwnerSample[] = [];
  const probes: Probe[] = [];
  // The probes go on into the drain, until each has been answered after the last kill: a probe held up
  // behind a message the dead instance had taken waits for that message's visibility timeout.
  const stopProbes = new AbortController();
  let probing: Promise<unknown> = Promise.resolve();
  return {
    capability: 'durable',
    setup() {
      for (let i = 0; i < 6; i++) probes.push({ type: `so-probe-${tag}-${i}`, ack: i % 2 === 0 ? 'buffered' : 'flushed', answered: [] });
      return Promise.resolve();
    },
    async run(ctx) {
      probing = Promise.all(probes.map((p) => probeLoop(ctx, p, stopProbes.signal)));
      await ownersLoop(ctx, samples);
    },
    async drain(ctx, deadline) {
      const lastKill = ctx.history.of('chaos', 'kill').at(-1)?.start ?? 0;
      while (Date.now() < deadline && probes.some((p) => !p.answered.some((a) => a.sent >= lastKill))) await sleep(1000);
      stopProbes.abort();
      await probing;
    },
    check(ctx) {
      const kills: Op[] = ctx.history.of('chaos', 'kill');
      const takeovers: number[] = [];
      const buffered: number[] = [];
      const flushed: number[] = [];
      let neverTaken = 0;
      let neverResumed = 0;
      const stuck: string[] = [];
      const lastKill = kills.at(-1)?.start;
      if (lastKill !== undefined)
        for (const probe of probes)
          if (resumed(probe, lastKill) === undefined)
            stuck.push(`probe ${probe.type} (ack=${probe.ack}) was never answered again after the last kill, until the drain ended`);
      for (const kill of kills) {
        for (const ms of takeover(samples, String(kill.data.worker), kill.start)) {
          if (ms === undefined) neverTaken++;
          else takeovers.push(ms);
        }
        for (const probe of probes) {
          const ms = resumed(probe, kill.start);
          if (ms === undefined) neverResumed++;
          else (probe.ack === 'buffered' ? buffered : flushed).push(ms);
        }
      }
      for (const list of [takeovers, buffered, flushed]) list.sort((a, b) => a - b);
      return Promise.resolve({
        capability: 'durable',
        invariants: [
          invariant('Durable work resumes after a kill', stuck, {
            kills: kills.length,
            'partitions taken over': takeovers.length,
            'not taken over before the load ended': neverTaken,
            'takeover max ms': percentile(takeovers, 100),
            'takeover p50 ms': percentile(takeovers, 50),
            'buffered append resumed p50 ms': percentile(buffered, 50),
            'buffered append resumed max ms': percentile(buffered, 100),
            'flushed append resumed p50 ms': percentile(flushed, 50),
            'flushed append resumed max ms': percentile(flushed, 100),
            'probes not resumed before the drain ended': neverResumed,
          }),
        ],
      });
    },
  };
}
