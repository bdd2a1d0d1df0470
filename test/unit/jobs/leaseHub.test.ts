/**
 * The lease hub on a graceful stop. The queue here is a scripted double of the hub's own port
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
  readonly receives: { max: number; answer: (messages: QueuedMessage[]) => void }[] = [];

  receive(_queue: string, max: number): Promise<QueuedMessage[]> {
    return new Promise((answer) => this.receives.push({ max, answer }));
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
