/**
 * The lease hub on a graceful stop, and the visibility its receives ask for. The queue here is a scripted double of the hub's own port
 * (ProcessorQueues), so a receive can be held open at the moment of the stop; the hub's long polls
 * against Azurite, and the stop through a host, are covered by the jobs integration tests and
 * devhost/test/start.test.ts.
 */
import { ManualClock } from '../../../shared/clock';
import { LeaseHub } from '../../../shared/jobs/delivery/leaseHub';
import { type ProcessorQueues, type QueuedMessage, ReceiptLost } from '../../../shared/jobs/delivery/processorQueues';
import { silentLogger } from '../../../shared/log';

/** Each receive waits until the test answers it with the messages it chooses; updates answer at once. */
class HeldQueue implements Pick<ProcessorQueues, 'receive' | 'update'> {
  readonly receives: { queue: string; max: number; visibilitySeconds: number; answer: (messages: QueuedMessage[]) => void }[] = [];
  readonly updates: { queue: string; messageId: string; popReceipt: string; visibilitySeconds: number }[] = [];
  /** Message ids whose update finds them no longer held (their invisibility ended). */
  readonly lost = new Set<string>();

  receive(queue: string, max: number, visibilitySeconds: number): Promise<QueuedMessage[]> {
    return new Promise((answer) => this.receives.push({ queue, max, visibilitySeconds, answer }));
  }

  update(queue: string, messageId: string, popReceipt: string, visibilitySeconds: number): Promise<string> {
    this.updates.push({ queue, messageId, popReceipt, visibilitySeconds });
    if (this.lost.has(messageId)) return Promise.reject(new ReceiptLost(`${messageId} is no longer held`));
    return Promise.resolve(`${popReceipt}+`);
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
    const first = hub.next('q', 30, deadline, 'w');
    await settled();
    const second = hub.next('q', 30, deadline, 'w');
    await settled();
    expect(queue.receives.map((r) => r.max)).toEqual([1]);
    // A third joins while the receive (sized for one) is under way.
    const third = hub.next('q', 30, deadline, 'w');
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
    await expect(hub.next('q', 30, deadline, 'w')).resolves.toBeUndefined();
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
    const longer = hub.next('q', 12, deadline, 'w');
    await settled();
    const shorter = hub.next('q', 10, deadline, 'w');
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

describe('lease waiters are fair shares by caller', () => {
  const setup = (maxWaiters: number) => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const queue = new HeldQueue();
    const hub = new LeaseHub(queue, clock, silentLogger, { pollMaxMs: 1000, maxWaiters });
    return { clock, queue, hub, deadline: clock.now() + 60_000 };
  };

  it("one caller holding its whole share cannot keep another's request out: its own oldest wait answers empty", async () => {
    const { hub, queue, deadline } = setup(8);
    // z's request is the one the first receive is sized for; a's are waiting behind it.
    const first = hub.next('q', 30, deadline, 'z');
    const mine = [0, 1, 2].map(() => hub.next('q', 30, deadline, 'a'));
    // The share of 8 is 2: a's third request took a's oldest place.
    await expect(mine[0]).resolves.toBeUndefined();
    const other = hub.next('q', 30, deadline, 'b');
    expect(hub.waiters).toBe(4);
    hub.close();
    queue.receives[0]?.answer([message('m0')]);
    await Promise.all([first, ...mine, other]);
  });

  it('a newcomer to a full instance ends the oldest wait of the largest holder, and is never refused', async () => {
    const { hub, queue, deadline } = setup(8);
    const answers: string[] = [];
    const waits = ['a', 'b', 'c', 'c', 'd', 'd', 'e', 'e'].map((who, i) =>
      hub.next('q', 30, deadline, who).then(() => answers.push(`${who}${i}`)),
    );
    await settled();
    expect(answers).toEqual([]);
    const newcomer = hub.next('q', 30, deadline, 'f');
    await settled();
    // Share 2 of 8: c, d and e hold two each; c, the first of them, gave up its oldest wait.
    expect(answers).toEqual(['c2']);
    expect(hub.waiters).toBe(8);
    hub.close();
    queue.receives[0]?.answer([message('m0')]);
    await Promise.all([...waits, newcomer]);
  });

  it('tells each wait that ends empty why: its place went to a fairer share, its time ran out, or the instance is stopping', async () => {
    const { hub, queue, clock } = setup(8);
    const why = new Map<string, string>();
    const told = (name: string) => (reason: string) => why.set(name, reason);
    const short = hub.next('q', 30, clock.now() + 1000, 'z', undefined, told('short'));
    const mine = ['a0', 'a1', 'a2'].map((name) => hub.next('q', 30, clock.now() + 60_000, 'a', undefined, told(name)));
    // Share 2 of 8: a's third request took a's oldest place.
    await expect(mine[0]).resolves.toBeUndefined();
    expect(why).toEqual(new Map([['a0', 'preempted']]));
    // z's wait runs out: it is answered once a poll after its deadline has come back empty.
    queue.receives[0]?.answer([]);
    await clock.advance(1000);
    await settled();
    queue.receives[1]?.answer([]);
    await expect(short).resolves.toBeUndefined();
    expect(why.get('short')).toBe('timeout');
    hub.close();
    await Promise.all(mine);
    expect(why).toEqual(
      new Map([
        ['a0', 'preempted'],
        ['short', 'timeout'],
        ['a1', 'stopping'],
        ['a2', 'stopping'],
      ]),
    );
    // A request after the stop is answered at once, and told so.
    await expect(hub.next('q', 30, clock.now() + 60_000, 'b', undefined, told('late'))).resolves.toBeUndefined();
    expect(why.get('late')).toBe('stopping');
  });

  it('a request that does not wait takes no place, so a full instance never refuses it', async () => {
    const { hub, queue, clock } = setup(1);
    const holder = hub.next('q', 30, clock.now() + 60_000, 'a');
    await settled();
    const now = hub.next('q', 30, clock.now(), 'b');
    await settled();
    // The full instance kept a's place: b's wait of 0 is served by the next poll.
    queue.receives[0]?.answer([message('m1')]);
    await expect(holder).resolves.toMatchObject({ messageId: 'm1' });
    await settled();
    queue.receives[1]?.answer([message('m2')]);
    await expect(now).resolves.toMatchObject({ messageId: 'm2' });
  });
});

describe('LeaseHub with a retry lane', () => {
  // The lane holds retries and leases that ran out (shared/jobs/delivery/leaseGrant.ts): read first, so
  // they never wait behind the queue's backlog, and found empty it is looked at again only after its
  // look interval, so a busy queue does not pay a second receive per poll.
  it('receives from the lane first, from the queue for the requests the lane left, and looks at an empty lane once per look interval', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const queue = new HeldQueue();
    const hub = new LeaseHub(queue, clock, silentLogger, { pollMaxMs: 1000, maxWaiters: 100 });
    const deadline = clock.now() + 60_000;

    const first = hub.next('q', 30, deadline, 'w', 'lane');
    const second = hub.next('q', 30, deadline, 'w', 'lane');
    await settled();
    // Sized for the first request only (the second joined while it was under way).
    expect(queue.receives.map((r) => [r.queue, r.max])).toEqual([['lane', 1]]);
    queue.receives[0]?.answer([message('retried')]);
    await expect(first).resolves.toMatchObject({ messageId: 'retried', queue: 'lane' });
    await settled();
    // The lane again (it had something), empty this time: the queue serves the request it left.
    queue.receives[1]?.answer([]);
    await settled();
    expect(queue.receives.slice(1).map((r) => [r.queue, r.max])).toEqual([
      ['lane', 1],
      ['q', 1],
    ]);
    queue.receives[2]?.answer([message('fresh')]);
    await expect(second).resolves.toMatchObject({ messageId: 'fresh', queue: 'q' });

    // Within the look interval (a quarter of the poll interval) after the empty look, a request goes to the queue alone.
    const third = hub.next('q', 30, deadline, 'w', 'lane');
    await settled();
    expect(queue.receives[3]?.queue).toBe('q');
    queue.receives[3]?.answer([message('fresh-2')]);
    await expect(third).resolves.toMatchObject({ messageId: 'fresh-2' });
    // After it, the lane is looked at first again.
    await clock.advance(250);
    const fourth = hub.next('q', 30, deadline, 'w', 'lane');
    await settled();
    expect(queue.receives[4]?.queue).toBe('lane');
    queue.receives[4]?.answer([message('due')]);
    await expect(fourth).resolves.toMatchObject({ messageId: 'due', queue: 'lane' });
  });
});

describe('LeaseHub due times', () => {
  it('looks at the lane when a retry it was told of falls due, inside the look interval', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const queue = new HeldQueue();
    const hub = new LeaseHub(queue, clock, silentLogger, { pollMaxMs: 1000, maxWaiters: 100 });
    const deadline = clock.now() + 60_000;

    const first = hub.next('q', 30, deadline, 'w', 'lane');
    await settled();
    queue.receives[0]?.answer([]);
    await settled();
    queue.receives[1]?.answer([message('fresh')]);
    await expect(first).resolves.toMatchObject({ queue: 'q' });
    // The lane was found empty: for its look interval (250 ms) requests go to the queue alone, but a
    // retry this instance recorded falls due 100 ms on, and the lane is looked at then.
    hub.due('lane', clock.now() + 100);
    await clock.advance(100);
    const second = hub.next('q', 30, deadline, 'w', 'lane');
    await settled();
    expect(queue.receives[2]?.queue).toBe('lane');
    queue.receives[2]?.answer([message('retried')]);
    await expect(second).resolves.toMatchObject({ messageId: 'retried', queue: 'lane' });
  });
});

describe('LeaseHub fair shares', () => {
  // The waiter pool pre-empts (docs/security.md, "Fair shares"): a request past its identity's share
  // takes that identity's oldest place. The request whose place went ends at once, even while a
  // receive sized for it is under way: waiting on for that receive held more requests than the cap
  // for as long as the receive took (a slow storage receive on a busy host: seconds).
  it('answers a request pre-empted during a receive at once; what the receive brings goes to the request that took its place', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const queue = new HeldQueue();
    // A pool of 4: one identity's share is 1.
    const hub = new LeaseHub(queue, clock, silentLogger, { pollMaxMs: 1000, maxWaiters: 4 });
    const deadline = clock.now() + 60_000;

    const first = hub.next('q', 30, deadline, 'w');
    await settled();
    expect(queue.receives.map((r) => r.max)).toEqual([1]);
    // The same identity asks again while the receive for its first request is under way: the second
    // takes the first's place, and the first is answered now, before the receive comes back.
    const second = hub.next('q', 30, deadline, 'w');
    await expect(first).resolves.toBeUndefined();
    expect(hub.waiters).toBe(1);

    queue.receives[0]?.answer([message('m1')]);
    await expect(second).resolves.toMatchObject({ messageId: 'm1' });
    expect(hub.waiters).toBe(0);
  });

  it('keeps a message whose request went for the next request on its queue, which hides it for a whole lease of its own', async () => {
    const start = Date.UTC(2026, 0, 1);
    const clock = new ManualClock(start);
    const queue = new HeldQueue();
    const hub = new LeaseHub(queue, clock, silentLogger, { pollMaxMs: 1000, maxWaiters: 4 });
    const deadline = clock.now() + 60_000;

    const first = hub.next('q', 30, deadline, 'w');
    await settled();
    // The same identity's request on another queue takes the place: no request on q is left.
    const elsewhere = hub.next('other', 30, deadline, 'w');
    await expect(first).resolves.toBeUndefined();
    queue.receives[0]?.answer([message('m1'), message('m2'), message('m3')]);
    await settled();
    expect(hub.waiters).toBe(1);

    // 5 s later a request with a longer lease takes m1 without a receive: hidden again for its 60 s
    // from now (an update: its dequeue count, the items' attempt, stays 1), received now.
    await clock.advance(5_000);
    await expect(hub.next('q', 60, deadline, 'v')).resolves.toMatchObject({
      messageId: 'm1',
      popReceipt: 'r-m1+',
      dequeueCount: 1,
      receivedAt: start + 5_000,
    });
    expect(queue.updates).toEqual([{ queue: 'q', messageId: 'm1', popReceipt: 'r-m1', visibilitySeconds: 60 }]);
    // One no longer held (its update finds it gone) is dropped, and the next kept one is not tried for
    // that request: it waits for a receive of its own.
    queue.lost.add('m2');
    const waiting = hub.next('q', 30, deadline, 'u');
    await settled();
    expect(queue.updates.map((u) => u.messageId)).toEqual(['m1', 'm2']);
    expect(queue.receives.filter((r) => r.queue === 'q')).toHaveLength(2);
    // Once its invisibility is (nearly) over, a kept message is left to come back to its queue.
    await clock.advance(24_500);
    const late = hub.next('q', 30, deadline, 't');
    await settled();
    expect(queue.updates).toHaveLength(2);
    hub.close();
    await expect(late).resolves.toBeUndefined();
    // The receives under way (for `waiting` and `elsewhere`) come back empty: their requests end.
    for (const r of queue.receives.slice(1)) r.answer([]);
    await expect(waiting).resolves.toBeUndefined();
    await expect(elsewhere).resolves.toBeUndefined();
  });
});
