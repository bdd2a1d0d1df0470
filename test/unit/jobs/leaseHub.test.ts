/**
 * The lease hub on a graceful stop, and the visibility its receives ask for. The queue here is a scripted double of the hub's own port
 * (ProcessorQueues), so a receive can be held open at the moment of the stop; the hub's long polls
 * against Azurite, and the stop through a host, are covered by the jobs integration tests and
 * devhost/test/start.test.ts.
 */
import { ManualClock } from '../../../shared/clock';
import { LeaseHub } from '../../../shared/jobs/delivery/leaseHub';
import type { ProcessorQueues, QueuedMessage } from '../../../shared/jobs/delivery/processorQueues';
import { silentLogger } from '../../../shared/log';

/** Each receive waits until the test answers it with the messages it chooses. */
class HeldQueue implements ProcessorQueues {
  readonly receives: { max: number; visibilitySeconds: number; answer: (messages: QueuedMessage[]) => void }[] = [];

  receive(_queue: string, max: number, visibilitySeconds: number): Promise<QueuedMessage[]> {
    return new Promise((answer) => this.receives.push({ max, visibilitySeconds, answer }));
  }
  update(): Promise<string> {
    return Promise.resolve('receipt');
  }
  delete(): Promise<void> {
    return Promise.resolve();
  }
}

const message = (id: string): QueuedMessage => ({ messageId: id, popReceipt: `r-${id}`, dequeueCount: 1, text: id });
const settled = () => new Promise((r) => setImmediate(r));

describe('LeaseHub.close', () => {
  it('answers waiting requests empty at once, lets a receive under way hand out what it brought, and answers later requests without waiting', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const queue = new HeldQueue();
    const hub = new LeaseHub(queue, clock, silentLogger, { pollMaxMs: 1000, maxWaiters: 100 });
    const deadline = clock.now() + 60_000;

    // Two requests: the first receive is sized for both and is held open.
    const first = hub.next('q', 30, deadline);
    await settled();
    const second = hub.next('q', 30, deadline);
    await settled();
    expect(queue.receives.map((r) => r.max)).toEqual([1]);
    // A third joins while the receive (sized for one) is under way.
    const third = hub.next('q', 30, deadline);
    await settled();

    hub.close();
    // Those the receive was not sized for are answered now, empty.
    await expect(second).resolves.toBeUndefined();
    await expect(third).resolves.toBeUndefined();
    expect(hub.waiters).toBe(1);

    // The receive comes back with a message: it goes to the request it was received for, not back to the queue.
    queue.receives[0]?.answer([message('m1')]);
    await expect(first).resolves.toMatchObject({ messageId: 'm1' });
    await settled();
    expect(hub.waiters).toBe(0);
    // Nothing is polled after the stop, and a new request does not wait.
    await expect(hub.next('q', 30, deadline)).resolves.toBeUndefined();
    expect(queue.receives).toHaveLength(1);
  });
});

describe('LeaseHub receive visibility', () => {
  // A lease's end is its own length after the receive (shared/jobs/delivery/leaseGrant.ts): were the
  // message received for less, another worker could lease it while the first still holds it.
  it('hides the messages for the longest lease among the requests the receive is for', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const queue = new HeldQueue();
    const hub = new LeaseHub(queue, clock, silentLogger, { pollMaxMs: 1000, maxWaiters: 100 });
    const deadline = clock.now() + 60_000;

    // A request with a 12 s lease, then — the declaration shortened meanwhile — one with 10 s.
    const longer = hub.next('q', 12, deadline);
    await settled();
    const shorter = hub.next('q', 10, deadline);
    await settled();
    queue.receives[0]?.answer([]);
    await settled();
    hub.wake('q');
    await settled();

    expect(queue.receives.map((r) => [r.max, r.visibilitySeconds])).toEqual([
      [1, 12],
      [2, 12],
    ]);
    // The message goes to the first in line, the 12 s lease: the queue hides it that long.
    queue.receives[1]?.answer([message('m1')]);
    await expect(longer).resolves.toMatchObject({ messageId: 'm1' });
    await settled();
    // The other's receive (now for it alone) asks for its own 10 s; the stop lets it come back empty.
    expect(queue.receives[2]?.visibilitySeconds).toBe(10);
    hub.close();
    queue.receives[2]?.answer([]);
    await settled();
    hub.wake('q'); // ends the idle pause after the empty receive (the test's clock does not move)
    await expect(shorter).resolves.toBeUndefined();
  });
});
