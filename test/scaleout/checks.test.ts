/**
 * The checkers judge a run only if they can tell a broken history from a sound one: each is handed
 * histories with a violation in them (and a sound one next to it), without any host.
 */
import { checkCounters } from './checks/counters';
import { checkGates, type GateFacts } from './checks/gates';
import { carriageEvents, checkJobs, type JobFacts, type Lease } from './checks/jobs';
import { checkSchedules, type ScheduleFacts } from './checks/schedules';
import { checkSequences, type SequenceFacts } from './checks/sequences';
import { checkStreams, type StreamFacts } from './checks/streams';
import type { CheckReport } from './workload';

const broken = (report: CheckReport): Record<string, number> =>
  Object.fromEntries(report.invariants.filter((i) => i.violations.length > 0).map((i) => [i.name, i.violations.length]));

describe('sequences checker', () => {
  const life = (name: string, how: 'kill' | 'stop', blocks: { lo: number; hi: number }[], tailWasTopmost = false) => ({
    name,
    how,
    blocks,
    tailWasTopmost,
  });
  const sound: SequenceFacts = {
    name: 's',
    start: 1,
    highWaterMark: 31,
    issued: [
      { numbers: [1, 2, 3], instance: 0 },
      { numbers: [11, 12], instance: 1 },
      { numbers: [21], instance: 0 },
    ],
    unknownCounts: [],
    // Instance 0 was killed holding 4–10; instance 1 stopped when 0's next life had reserved above it.
    lives: [
      life('a', 'kill', [{ lo: 1, hi: 11 }]),
      life('b', 'stop', [{ lo: 11, hi: 21 }]),
      life('c', 'stop', [{ lo: 21, hi: 31 }], false),
    ],
  };

  test('holds when what each instance left unused is the tail of its blocks', () => {
    const report = checkSequences(sound);
    expect(broken(report)).toEqual({});
    expect(report.invariants[1]?.figures).toMatchObject({ gaps: 24, 'tails of killed instances': 7 });
  });

  test('a number issued twice, or reserved by two instances, is a violation', () => {
    const report = checkSequences({
      ...sound,
      issued: [...sound.issued, { numbers: [12], instance: 2 }],
      lives: [...sound.lives, life('d', 'stop', [{ lo: 5, hi: 6 }])],
    });
    expect(broken(report)).toEqual({ 'no number issued twice': 2 });
  });

  test('a number skipped inside a block, or a tail not given back that could have been, is a gap the checker refuses', () => {
    const gaps = 'gaps only from dead and stopped instances and unanswered requests, counted';
    const skipped = { ...sound, issued: [...sound.issued, { numbers: [15], instance: 1 }] };
    expect(broken(checkSequences(skipped))).toEqual({ [gaps]: 1 });
    // …unless attempts without an answer could have taken them (12 < 13, 14 < 15).
    expect(broken(checkSequences({ ...skipped, unknownCounts: [2] }))).toEqual({});
    const kept = { ...sound, lives: [sound.lives[0]!, sound.lives[1]!, life('c', 'stop', [{ lo: 21, hi: 31 }], true)] };
    expect(broken(checkSequences(kept))).toEqual({ [gaps]: 1 });
  });
});

describe('counters checker', () => {
  const counter = { name: 'c', acknowledged: [1, 1, 5], unknown: [1, 2], readValue: undefined };

  test('the stored value may hold the unanswered increments or not', () => {
    expect(broken(checkCounters([{ ...counter, storedValue: 7 }]))).toEqual({});
    expect(broken(checkCounters([{ ...counter, storedValue: 10 }]))).toEqual({});
  });

  test('a lost or doubled acknowledged increment, or a read that disagrees with storage, is a violation', () => {
    const name = 'every acknowledged increment counted exactly once';
    expect(broken(checkCounters([{ ...counter, storedValue: 6 }]))).toEqual({ [name]: 1 });
    expect(broken(checkCounters([{ ...counter, storedValue: 11 }]))).toEqual({ [name]: 1 });
    expect(broken(checkCounters([{ ...counter, storedValue: 7, readValue: 8 }]))).toEqual({ [name]: 1 });
  });
});

describe('gates checker', () => {
  const sound: GateFacts = {
    registered: [
      { gate: 'g', runId: 'a', action: 'enqueue', late: false },
      { gate: 'g', runId: 'b', action: 'none', late: true, proceededAtOnce: true, lateFlag: true },
    ],
    stored: [
      { gate: 'g', runId: 'a', generation: 1, late: false, actionType: 'enqueue', actionState: 'done' },
      { gate: 'g', runId: 'b', generation: 1, late: true, actionType: 'none', actionState: 'none' },
    ],
    views: [
      { gate: 'g', runId: 'a', state: 'proceeded', releaseGeneration: 1 },
      { gate: 'g', runId: 'b', state: 'proceeded', releaseGeneration: 1 },
    ],
    releaseRows: new Map([['g', [1]]]),
    actionMessages: [{ gate: 'g', runId: 'a' }],
    releases: [{ gate: 'g', generation: 1, at: 1000, instance: 0 }],
    watchers: [
      { gate: 'g', generation: 1, instance: 0, kind: 'longPoll', heardAt: 1010, instanceLost: false },
      { gate: 'g', generation: 1, instance: 1, kind: 'events', heardAt: 1900, instanceLost: false },
      { gate: 'g', generation: 1, instance: 2, kind: 'events', heardAt: undefined, instanceLost: true },
    ],
  };

  test('holds for a sound history, and gives the propagation figures', () => {
    const report = checkGates(sound);
    expect(broken(report)).toEqual({});
    const watch = report.invariants.find((i) => i.name.startsWith('a release reaches'));
    expect(watch?.figures).toMatchObject({ 'same instance max ms': 10, 'other instances max ms': 900 });
  });

  test('a run left waiting, a late joiner kept waiting, a lost action and a deaf watcher are violations', () => {
    const report = checkGates({
      ...sound,
      registered: [sound.registered[0]!, { ...sound.registered[1]!, proceededAtOnce: false }],
      views: [{ gate: 'g', runId: 'a', state: 'waiting', releaseGeneration: undefined }, sound.views[1]!],
      actionMessages: [],
      watchers: [{ ...sound.watchers[1]!, heardAt: undefined }],
    });
    expect(broken(report)).toEqual({
      'every registered run proceeds exactly once per generation': 1,
      'late joiners proceed at once': 1,
      'each action performed at least once and recorded once': 1,
      'a release reaches watchers and long polls on every instance': 1,
    });
  });
});

describe('jobs checker', () => {
  const lease = (worker: number, receivedAt: number, expiresAt: number, completedAt?: number, status = 200): Lease => ({
    worker,
    instance: worker,
    jobId: 'j',
    items: ['i0'],
    receivedAt,
    expiresAt,
    completion: completedAt === undefined ? undefined : { sentAt: completedAt, status, instance: 0 },
  });
  const sound: JobFacts = {
    accepted: [
      { id: 'j', items: ['i0'], answeredAt: 0, completedAt: 50_000, state: 'completed' },
      { id: 'k', items: ['i0'], answeredAt: 10_000, completedAt: 20_000, state: 'completed' },
    ],
    results: [
      { jobId: 'j', results: new Map([['i0', ['succeeded']]]), tallied: 1 },
      { jobId: 'k', results: new Map([['i0', ['succeeded']]]), tallied: 1 },
    ],
    // An abandoned lease, then the item again once it ran out.
    leases: [lease(0, 1000, 11_000), lease(1, 11_500, 21_500, 12_000)],
    maxOpen: 2,
    refusedFull: 3,
    slots: { count: 0, members: [] },
    maxWaiters: 8,
    probes: [{ instance: 0, sent: 11, heldTogether: 8, refused: 3, lost: false }],
    change: {
      at: 30_000,
      cacheMs: 5000,
      staleLeases: [{ requestedAt: 33_000, instance: 1 }],
      firstNew: new Map([[0, 2000]]),
      extensionsJudged: 4,
    },
    cutLongPolls: 0,
  };

  test('holds for a sound history', () => {
    expect(broken(checkJobs(sound))).toEqual({});
  });

  // The bounded real-host run once reported an item leased again 6.6 s before the first lease's end
  // (#38): a completion whose answer is lost may still have been performed — results recorded and
  // `retry` items put back, visible after the retry delay (shared/jobs/delivery/leases.ts) — so the
  // first worker's hold ended when it sent it. A refused completion changed nothing.
  test('a completion whose answer was lost ends the hold when it was sent; a refused one does not', () => {
    const holds = (completion: Lease['completion']) =>
      broken(checkJobs({ ...sound, leases: [{ ...lease(0, 1000, 11_000), completion }, lease(1, 3_000, 13_000, 3_500)] }));
    const name = 'no batch held by two workers at once';
    expect(holds({ sentAt: 1_500, status: 502, instance: 0 })).toEqual({});
    expect(holds({ sentAt: 1_500, status: undefined, instance: undefined })).toEqual({});
    expect(holds({ sentAt: 1_500, status: 200, instance: 2 })).toEqual({});
    expect(holds({ sentAt: 1_500, status: 409, instance: 2 })).toEqual({ [name]: 1 });
    // The front door's own 503 (no instance up, no instance header) reached no instance.
    expect(holds({ sentAt: 1_500, status: 503, instance: undefined })).toEqual({ [name]: 1 });
    expect(holds(undefined)).toEqual({ [name]: 1 });
  });

  test('a doubled result, two holders at once, an overfull cap, an overfull waiter list and a stale declaration are violations', () => {
    const report = checkJobs({
      ...sound,
      results: [{ jobId: 'j', results: new Map([['i0', ['succeeded', 'succeeded']]]), tallied: 1 }, sound.results[1]!],
      leases: [lease(0, 1000, 11_000), lease(1, 10_000, 20_000)],
      maxOpen: 1,
      probes: [{ instance: 0, sent: 11, heldTogether: 9, refused: 2, lost: false }],
      change: { ...sound.change!, staleLeases: [{ requestedAt: 36_000, instance: 1 }] },
    });
    expect(broken(report)).toEqual({
      'every item gets one final result (nothing a killed instance held is lost)': 1,
      'no batch held by two workers at once': 1,
      'the open-jobs cap holds across instances': 1,
      'the lease-waiter cap holds on every instance': 1,
      'a processor change reaches every instance within its cache time': 1,
    });
  });

  test('counts the copies of batches the instances dropped, from their JSON log lines, among the hold figures', () => {
    const line = (event: string) => `{"level":"warn","event":"${event}","job":"j"}`;
    const carriage = carriageEvents([
      [line('jobs.batch_copy_dropped'), line('jobs.leased'), line('jobs.batch_copy_dropped')].join('\n'),
      [line('jobs.batch_not_bound_yet'), line('jobs.batch_handed_on_again')].join('\n'),
      '',
    ]);
    expect(carriage).toEqual({ copiesDropped: 2, notBoundYet: 1, handedOnAgain: 1 });
    const hold = checkJobs({ ...sound, carriage }).invariants.find((i) => i.name === 'no batch held by two workers at once');
    expect(hold?.figures).toMatchObject({ 'copies dropped': 2, 'lane copies not bound yet': 1, 'handovers finished again': 1 });
  });
});

describe('schedules checker', () => {
  const once: ScheduleFacts = {
    id: 'o',
    kind: 'once',
    state: 'completed',
    runCount: 1,
    runs: [{ at: 'x', kind: 'scheduled', outcome: 'succeeded' }],
    messages: [5000, 5100],
    dueAt: 4000,
  };

  test('a second copy of a message is a redelivery when an instance died meanwhile, a double fire otherwise', () => {
    expect(broken(checkSchedules([once], [{ at: 5050 }]))).toEqual({});
    expect(broken(checkSchedules([once], []))).toEqual({ 'each occurrence fires once, never once per instance': 1 });
  });

  test('an occurrence run twice, or a one-off that never fired, is a violation', () => {
    const cron: ScheduleFacts = {
      id: 'c',
      kind: 'cron',
      state: 'cancelled',
      runCount: 2,
      runs: [
        { at: 't1', kind: 'scheduled', outcome: 'succeeded' },
        { at: 't1', kind: 'scheduled', outcome: 'succeeded' },
      ],
      messages: [1, 2],
    };
    const pending: ScheduleFacts = { ...once, state: 'active', runCount: 0, runs: [], messages: [] };
    expect(broken(checkSchedules([cron, pending], []))).toEqual({ 'each occurrence fires once, never once per instance': 3 });
  });
});

describe('streams checker', () => {
  const sound: StreamFacts = {
    type: 't',
    log: [
      { producer: 'a', seq: 1, index: 0 },
      { producer: 'b', seq: 1, index: 1 },
      { producer: 'a', seq: 2, index: 2 },
    ],
    unflushed: new Set(['b/2']),
    acknowledged: new Map([
      ['a/1', 'flushed'],
      ['b/1', 'buffered'],
    ]),
    sent: new Set(['a/1', 'a/2', 'b/1', 'b/2']),
  };

  test('holds for a sound log (an unacknowledged event may or may not be in it)', () => {
    expect(broken(checkStreams([sound]))).toEqual({});
  });

  test('an acknowledged event still in the writer after the drain is late, not lost', () => {
    const report = checkStreams([{ ...sound, acknowledged: new Map([...sound.acknowledged, ['b/2', 'buffered']]) }]);
    expect(broken(report)).toEqual({ 'everything acknowledged was flushed by the end of the drain': 1 });
  });

  test('interleaved writers, a producer out of order and a lost acknowledged event are violations', () => {
    const report = checkStreams([
      {
        ...sound,
        log: [
          { producer: 'a', seq: 2, index: 0 },
          { producer: 'a', seq: 1, index: 0 },
        ],
      },
    ]);
    expect(broken(report)).toEqual({
      'one writer at a time per stream (the log index never repeats or skips)': 1,
      'per-producer order holds': 1,
      'every acknowledged event is in the log exactly once (buffered ones: or still durable in the writer)': 1,
    });
  });
});
