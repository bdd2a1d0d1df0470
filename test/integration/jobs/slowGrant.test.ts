/**
 * A grant slower than its receive's visibility leases nothing, on Azurite. A lease request receives a
 * message hidden for the lease time and then prepares the lease (reads, then a move into the retry
 * lane, where the batch is held afresh). When that takes longer than the lease time — a machine that
 * stalls for seconds — the message is visible again and another request (here another instance)
 * leases it. The slow one used to lease it as well, from its fresh lane copy: two workers held one
 * batch at once. Each stall is a request held at a fault proxy until the other instance holds the batch.
 */
import { declareBody } from '../../../shared/jobs/http/processorSchemas';
import { type FaultProxy, type ProxiedRequest, startFaultProxy } from '../../support/faultProxy';
import { type JobHarness, jobHarness, jobNames } from '../../support/jobs';
import { runStorage } from '../../support/storageAccounts';

const items = Array.from({ length: 5 }, (_, i) => ({ id: `s-${i}` }));

interface Stall {
  /** Resolves when the slow instance's request is held. */
  readonly reached: Promise<void>;
  release(): void;
}

/** Holds the first request of the slow instance that `matches`, once its receive of `queue` has been made. */
function stallAfterReceive(proxy: FaultProxy, queue: string, matches: (r: ProxiedRequest) => boolean): Stall {
  let release = (): void => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  let reach = (): void => undefined;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  let received = false;
  let holding = false;
  proxy.setRules((r) => {
    if (r.service === 'queue' && r.method === 'GET' && r.path.includes(`/${queue}/messages`)) received = true;
    else if (received && !holding && matches(r)) {
      holding = true;
      reach();
      return { kind: 'hold', until: held };
    }
    return undefined;
  });
  return { reached, release };
}

async function twoInstances(
  proxy: FaultProxy,
): Promise<{ slow: JobHarness; other: JobHarness; jobId: string; queue: string; lane: string }> {
  const names = jobNames();
  const slow = jobHarness({ names, connection: proxy.connectionString });
  const other = jobHarness({ names, settings: { leasePollMaxMs: 200 } });
  await other.jobs.processors.declare('stall', declareBody.parse({ type: 'external', batchSize: 5, leaseSeconds: 5 }));
  const { job } = await other.jobs.submissions.submit({ processor: 'stall', items }, undefined);
  return { slow, other, jobId: job.id, queue: `${names.queuePrefix}-x-stall`, lane: `${names.queuePrefix}-r-stall` };
}

/** The other instance leases the batch once the slow one's hold on it has run out; its completion, once called. */
async function otherLeases(other: JobHarness): Promise<() => Promise<void>> {
  const lease = await other.jobs.leases.take('stall', { holder: 'b', waitSeconds: 60 });
  expect(lease?.items.map((i) => i.id)).toEqual(items.map((i) => i.id));
  return async () => {
    await other.jobs.leases.complete(
      lease!.leaseId,
      lease!.items.map((i) => ({ id: i.id, status: 'succeeded' as const })),
    );
  };
}

/** The job completed with one result per item, and no copy of its batch is left in the queue or the lane, hidden or not. */
async function expectEveryItemOnce(other: JobHarness, jobId: string, queue: string, lane: string): Promise<void> {
  expect(await other.jobs.reads.view(jobId)).toMatchObject({ state: 'completed', totals: { items: 5, succeeded: 5, pending: 0 } });
  for (const name of [queue, lane]) expect((await (await other.queue(name)).getProperties()).approximateMessagesCount).toBe(0);
}

describe('a lease request whose grant outlasts its receive, on Azurite', () => {
  let proxy: FaultProxy;
  beforeEach(async () => {
    proxy = await startFaultProxy(runStorage());
  });
  afterEach(async () => {
    await proxy.close();
  });

  /**
   * The slow instance takes the batch with its request held at `stallAt` (named by the queue and the
   * lane); the other leases it meanwhile, and the slow one, let go while the other holds it, must
   * lease nothing.
   */
  async function slowOneLeasesNothing(stallAt: (names: { queue: string; lane: string }) => (r: ProxiedRequest) => boolean): Promise<void> {
    const { slow, other, jobId, queue, lane } = await twoInstances(proxy);
    const stall = stallAfterReceive(proxy, queue, stallAt({ queue, lane }));
    const slowTake = slow.jobs.leases.take('stall', { holder: 'a', waitSeconds: 0 });
    await stall.reached;
    const complete = await otherLeases(other);
    // The slow one goes on while the other holds the batch: it must not lease it too.
    stall.release();
    await expect(slowTake).resolves.toBeUndefined();
    await complete();
    await expectEveryItemOnce(other, jobId, queue, lane);
  }

  it('leases nothing once another request has received its message again: one holder at a time', async () => {
    // Its first step after the receive waits until the other instance holds the batch.
    await slowOneLeasesNothing(() => () => true);
  });

  it('takes its lane copy back and leases nothing when the message is lost while the copy is put', async () => {
    // The put of the batch into the lane (after the message was found still held) waits until the other instance holds it.
    await slowOneLeasesNothing(
      ({ lane }) =>
        (r) =>
          r.method === 'POST' && r.path.includes(`/${lane}/messages`),
    );
  });
});
