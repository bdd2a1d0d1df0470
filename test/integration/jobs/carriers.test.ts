/**
 * One carrier per batch, on Azurite through the fault proxy: each way a batch came to travel in two
 * messages (docs/scale-out.md, soak run 26 and the bounded run beside it) is made to happen, and the
 * second message must never be leased while the first is held — it is deleted as a copy — and every
 * item must still be recorded once. Before the carrier rows, each of these ended with two workers
 * holding the same items at once (the second take below got a lease).
 */
import { setTimeout as sleep } from 'node:timers/promises';

import { declareBody } from '../../../shared/jobs/http/processorSchemas';
import { MemoryLogger } from '../../../shared/log';
import { type FaultAction, type FaultProxy, type ProxiedRequest, startFaultProxy } from '../../support/faultProxy';
import { type JobHarness, jobHarness, jobNames } from '../../support/jobs';
import { runStorage } from '../../support/storageAccounts';
import { until } from '../../support/waits';
import type { Granted } from '../../../shared/jobs/delivery/leaseTerms';

const items = Array.from({ length: 5 }, (_, i) => ({ id: `c-${i}` }));
const ids = items.map((i) => i.id);

interface Setup {
  /** The instance whose storage goes through the proxy. */
  readonly a: JobHarness;
  /** A second instance, straight to Azurite. */
  readonly b: JobHarness;
  readonly logs: readonly MemoryLogger[];
  readonly jobId: string;
  readonly queue: string;
  readonly lane: string;
}

async function setUp(proxy: FaultProxy): Promise<Setup> {
  const names = jobNames();
  const logs = [new MemoryLogger(), new MemoryLogger()] as const;
  const a = jobHarness({ names, connection: proxy.connectionString, logger: logs[0], settings: { leasePollMaxMs: 200 } });
  const b = jobHarness({ names, logger: logs[1], settings: { leasePollMaxMs: 200 } });
  await b.jobs.processors.declare('carry', declareBody.parse({ type: 'external', batchSize: 5, leaseSeconds: 5 }));
  const { job } = await b.jobs.submissions.submit({ processor: 'carry', items }, undefined);
  return { a, b, logs, jobId: job.id, queue: `${names.queuePrefix}-x-carry`, lane: `${names.queuePrefix}-r-carry` };
}

/** Messages in `queue`, hidden or not. */
async function depth(t: Setup, queue: string): Promise<number> {
  return (await (await t.b.queue(queue)).getProperties()).approximateMessagesCount ?? 0;
}

const copiesDropped = (t: Setup): number => t.logs.reduce((n, log) => n + log.events('jobs.batch_copy_dropped').length, 0);

/** Another instance of the app, straight to Azurite (stopped after one use: its lease requests then end at once). */
const another = (t: Setup): JobHarness => jobHarness({ names: t.a.names, logger: t.logs[1], settings: { leasePollMaxMs: 200 } });

/**
 * A worker on another instance waits for a lease until `done` holds; it must get none. (Without the
 * carrier rows a copy of the batch is leased: the wait then ends with that second lease.)
 */
async function nothingLeasedUntil(t: Setup, what: string, done: () => Promise<boolean> | boolean): Promise<Granted | undefined> {
  const other = another(t);
  const second = other.jobs.leases.take('carry', { holder: 'b', waitSeconds: 600 });
  await Promise.race([until(what, async () => ((await done()) ? true : undefined)), second]);
  other.jobs.stopping();
  return second;
}

/**
 * While the holder keeps its lease (extending it, as a worker does), a copy of the batch is delivered
 * and dropped, and no worker gets the batch a second time. The holder's lease id, as last extended.
 */
async function noSecondHolder(t: Setup, holder: Granted | undefined): Promise<string> {
  expect(holder?.items.map((i) => i.id)).toEqual(ids);
  const kept = keepAlive(t, holder!);
  const second = await nothingLeasedUntil(t, 'a copy of the batch delivered and dropped', () => copiesDropped(t) > 0);
  const held = await kept.stop();
  // A second lease only after the holder's had run out (a machine that stalled the heartbeat) is no second holder.
  if (second !== undefined) expect(second.grantedAt).toBeGreaterThanOrEqual(held.expiresAt);
  expect(second).toBeUndefined();
  return held.leaseId;
}

/** A worker's heartbeat: the lease extended every second (its lease time is 5 s) until stopped; the lease as last extended. */
function keepAlive(t: Setup, granted: Granted): { stop(): Promise<{ leaseId: string; expiresAt: number }> } {
  let held = { leaseId: granted.leaseId, expiresAt: granted.lease.expiresAt };
  let done = false;
  const beat = (async () => {
    while (!done) {
      await sleep(1000);
      if (!done) held = await t.a.jobs.leases.extend(held.leaseId);
    }
  })();
  return {
    stop: async () => {
      done = true;
      await beat;
      return held;
    },
  };
}

/** The holder completes; the job is complete with each item once; copies still hidden come back and are deleted, never leased. */
async function completesOnce(t: Setup, leaseId: string): Promise<void> {
  const report = await t.a.jobs.leases.complete(
    leaseId,
    ids.map((id) => ({ id, status: 'succeeded' as const })),
  );
  expect(report).toMatchObject({ recorded: 5, alreadyFinal: 0, jobFinished: true });
  expect(await t.b.jobs.reads.view(t.jobId)).toMatchObject({ state: 'completed', totals: { items: 5, succeeded: 5, pending: 0 } });
  const empty = async () => (await depth(t, t.queue)) + (await depth(t, t.lane)) === 0;
  expect(await nothingLeasedUntil(t, 'no message left in the queue or the lane', empty)).toBeUndefined();
}

/** A rule applying `action` to the first `times` requests that match. */
function first(times: number, matches: (r: ProxiedRequest) => boolean, action: FaultAction) {
  let left = times;
  return (r: ProxiedRequest): FaultAction | undefined => {
    if (left === 0 || !matches(r)) return undefined;
    left--;
    return action;
  };
}

const messagesOf = (queue: string) => (r: ProxiedRequest) => r.service === 'queue' && r.path.includes(`/${queue}/messages`);

describe('one carrier per batch, on Azurite', () => {
  let proxy: FaultProxy;
  beforeEach(async () => {
    proxy = await startFaultProxy(runStorage());
  });
  afterEach(async () => {
    await proxy.close();
  });

  /**
   * A move whose requests matching `fails` answer 503 on every try: its lease request fails with the
   * batch in both the queue and the lane. Both come back after the lease time; one is leased, the other
   * is a copy, and the batch is held by one worker only.
   */
  async function moveFailsThenOneHolder(t: Setup, fails: (r: ProxiedRequest) => boolean): Promise<void> {
    proxy.setRules((r) => (fails(r) ? { kind: 'status', status: 503 } : undefined));
    await expect(t.a.jobs.leases.take('carry', { holder: 'a', waitSeconds: 0 })).rejects.toThrow();
    proxy.setRules();
    expect([await depth(t, t.queue), await depth(t, t.lane)]).toEqual([1, 1]);
    const holder = await t.a.jobs.leases.take('carry', { holder: 'a', waitSeconds: 600 });
    await completesOnce(t, await noSecondHolder(t, holder));
  }

  it('a move whose delete of the queue message fails: the queue message comes back as a copy and is deleted', async () => {
    const t = await setUp(proxy);
    // Every try of the delete fails after the batch was put into the lane and bound there.
    await moveFailsThenOneHolder(t, (r) => messagesOf(t.queue)(r) && r.method === 'DELETE');
  });

  it('a put into the lane whose answer is lost: the storage client puts it again, and the first copy is deleted', async () => {
    const t = await setUp(proxy);
    proxy.setRules(first(1, (r) => messagesOf(t.lane)(r) && r.method === 'POST', { kind: 'loseResponse' }));
    const holder = await t.a.jobs.leases.take('carry', { holder: 'a', waitSeconds: 0 });
    proxy.setRules();
    // Two lane messages carry the batch; the row names the one whose answer came back.
    expect(await depth(t, t.lane)).toBe(2);
    await completesOnce(t, await noSecondHolder(t, holder));
  });

  it('an envelope sent twice (an enqueue resumed after a kill): the second is deleted at its move', async () => {
    const t = await setUp(proxy);
    const queue = await t.b.queue(t.queue);
    const [sent] = (await queue.peekMessages()).peekedMessageItems;
    await queue.sendMessage(sent!.messageText);
    const holder = await t.a.jobs.leases.take('carry', { holder: 'a', waitSeconds: 0 });
    await completesOnce(t, await noSecondHolder(t, holder));
  });

  it('a move interrupted before its binding: the lane message waits, the queue message is moved again, the first is deleted', async () => {
    const t = await setUp(proxy);
    // The binding is the move's one insert into the results table (an instance killed there leaves the same).
    await moveFailsThenOneHolder(t, (r) => r.service === 'table' && r.method === 'POST' && r.path.includes(t.a.names.results));
  });

  it('a split interrupted after its handover: the carrier hands the parts on again, and each item is leased once', async () => {
    const t = await setUp(proxy);
    // A lease of all five that runs out (never used: not an attempt), then a lease of two splits the batch.
    expect((await t.a.jobs.leases.take('carry', { holder: 'a', waitSeconds: 0 }))?.items).toHaveLength(5);
    // The split sends the rest, then puts the leased part: that put fails (the instance dies there).
    let posts = 0;
    proxy.setRules((r) => {
      if (!(messagesOf(t.lane)(r) && r.method === 'POST')) return undefined;
      posts++;
      // The first POST is the rest (let through); the put of the leased part and its retries fail.
      return posts === 1 ? undefined : { kind: 'status', status: 503 };
    });
    await expect(t.a.jobs.leases.take('carry', { holder: 'a', maxItems: 2, waitSeconds: 600 })).rejects.toThrow();
    proxy.setRules();
    // Whatever comes now: the rest (sent), the retired carrier (hands both parts on again), copies of
    // the parts. Each item is held by one lease only, and all five are leased.
    const held = new Map<string, number>();
    const leases: { granted: Granted; kept: ReturnType<typeof keepAlive> }[] = [];
    while (held.size < 5) {
      const lease = await t.a.jobs.leases.take('carry', { holder: 'a', waitSeconds: 600 });
      expect(lease).toBeDefined();
      for (const item of lease!.items) {
        expect(held.get(item.id)).toBeUndefined();
        held.set(item.id, leases.length);
      }
      leases.push({ granted: lease!, kept: keepAlive(t, lease!) });
    }
    expect([...held.keys()].sort()).toEqual(ids);
    for (const [i, { granted, kept }] of leases.entries()) {
      const { leaseId } = await kept.stop();
      const mine = [...held].filter(([, at]) => at === i).map(([id]) => ({ id, status: 'succeeded' as const }));
      expect(mine.map((m) => m.id)).toEqual(granted.items.map((item) => item.id));
      await t.a.jobs.leases.complete(leaseId, mine);
    }
    expect(await t.b.jobs.reads.view(t.jobId)).toMatchObject({ state: 'completed', totals: { items: 5, succeeded: 5, pending: 0 } });
    // Copies of the parts still hidden come back and are deleted (a worker waiting gets none of them).
    const empty = async () => (await depth(t, t.lane)) === 0;
    expect(await nothingLeasedUntil(t, 'no message left in the lane', empty)).toBeUndefined();
  });

  it('a lane message of the previous version (no carrier key) binds its batch on its first lease; a second one is a copy', async () => {
    const t = await setUp(proxy);
    // What a lane held before this version: the sealed envelope as enqueued, twice (a move that failed).
    const queue = await t.b.queue(t.queue);
    const [sent] = (await queue.receiveMessages()).receivedMessageItems;
    const lane = await t.b.queue(t.lane);
    await lane.sendMessage(sent!.messageText);
    await lane.sendMessage(sent!.messageText);
    await queue.deleteMessage(sent!.messageId, sent!.popReceipt);
    const holder = await t.a.jobs.leases.take('carry', { holder: 'a', waitSeconds: 0 });
    await completesOnce(t, await noSecondHolder(t, holder));
  });
});
