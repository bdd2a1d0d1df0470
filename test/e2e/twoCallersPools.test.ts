/**
 * The property of issue #36's "Must hold" over every capability but jobs (those are
 * test/e2e/twoCallersProperty.test.ts): two identities interleave random operations on gated runs,
 * stream producers, schedules, long polls and event streams, and auto-created counters and
 * sequences. Neither reads, takes or cancels the other's resources, neither ever holds more than
 * its share of any pool, and afterwards each one's runs, schedules, events and increments are all
 * there ("Nothing lost"). The shares are small through the host's settings, so a few operations
 * reach them: a quarter of 8 is 2 per caller for gate waiters, live schedules, held requests and
 * auto-created counters and sequences, and 2 producers per caller of a stream writer.
 *
 * The model is exact: the two callers are the only users of each run's gate and stream type (the
 * schedules cap counts the whole host: each run's are cancelled by the admin at its end), so every
 * answer's status is predicted, and a held request's early end (its own caller's newer one took its
 * place) is predicted too. fast-check draws the sequences from a fixed seed and shrinks a failure.
 */
import { randomBytes } from 'node:crypto';

import fc from 'fast-check';

import type { LogLine } from '../../shared/streams/ndjson';
import { describeOwnHost, type E2eHost, hostLabel } from './support/harness';
import { newTag } from './support/identities';
import { type Held, heldAsModelled as heldMatches, live, open } from './support/heldRequests';
import { readLog } from './support/streams';
import { type Answer, asAdmin, nth, other, sendAs, startCredentialedHost, submitterHeaders, type Who } from './support/twoCallers';
import { until } from './support/wait';

const share = 2;
const kinds = ['startRun', 'readOwnRun', 'readOtherRun', 'takeOtherRunId', 'append', 'appendAsTheirs', 'createSchedule'] as const;
const moreKinds = ['readOwnSchedule', 'readOtherSchedule', 'cancelSchedule', 'triggerSchedule', 'poll', 'watch', 'hangUp'] as const;
const namedKinds = ['increment', 'incrementOther', 'next'] as const;
type Kind = (typeof kinds)[number] | (typeof moreKinds)[number] | (typeof namedKinds)[number] | 'held' | 'release';
interface Op {
  readonly who: Who;
  readonly kind: Kind;
  readonly pick: number;
}
const op: fc.Arbitrary<Op> = fc.record({
  who: fc.constantFrom<Who>('a', 'b'),
  kind: fc.constantFrom<Kind>(...kinds, ...moreKinds, ...namedKinds, 'held', 'held', 'release'),
  pick: fc.nat(50),
});

/** One caller's side of a run: what it made, the model its answers are held to. */
interface Side {
  readonly headers: Record<string, string>;
  readonly runs: string[];
  waiting: number;
  readonly schedules: string[];
  /** Producer → the last seq of it this caller had accepted. */
  readonly producers: Map<string, number>;
  readonly events: string[];
  readonly held: Held[];
  /** Counters and sequences it auto-created. */
  readonly made: Set<string>;
}

/**
 * Auto-created counters and sequences are never deleted, so their pools (8 each) fill up over the
 * runs: the host-wide counts are part of the model (this host is this file's alone).
 */
const autoCreated = { counters: 0, sequences: 0 };
/** Counter → the sum of the increments accepted, whoever made them (counters belong to nobody). */
const counterSums = new Map<string, number>();

/** What the runs exercised, so the property is never met by doing nothing. */
const seen = { overShare: 0, strangerRefused: 0, preempted: 0, sharedProducerIds: 0 };

describeOwnHost(`two callers in every pool (${hostLabel()}, keys on, credentials, shares of 2)`, () => {
  let host: E2eHost;
  const key = randomBytes(32);

  beforeAll(async () => {
    host = await startCredentialedHost(key, {
      TALLYHO_GATES_MAX_WAITERS: '8',
      TALLYHO_SCHEDULES_MAX_LIVE: '8',
      TALLYHO_HTTP_MAX_HELD: '8',
      TALLYHO_STREAMS_MAX_PRODUCERS: '8',
      TALLYHO_STREAMS_MAX_PRODUCERS_PER_CALLER: String(share),
      TALLYHO_COUNTERS_AUTO_CREATE: 'true',
      TALLYHO_COUNTERS_MAX_AUTO_CREATED: '8',
      TALLYHO_SEQUENCES_AUTO_CREATE: 'true',
      TALLYHO_SEQUENCES_MAX_AUTO_CREATED: '8',
    });
  }, 120_000);

  afterAll(async () => {
    await host?.dispose();
  });

  const send = (side: Side, method: string, path: string, body?: unknown): Promise<Answer> =>
    sendAs(host, side.headers, method, path, body);

  function expectStatus(answer: Answer, status: number, why: string): void {
    expect({ why, status: answer.status, body: answer.status === status ? {} : answer.body }).toEqual({ why, status, body: {} });
  }

  /** A stranger's call: exactly what the route table gives (404 for an owned resource, 409 for a taken run id, 401 for an admin route). */
  function refused(answer: Answer, status: 401 | 404 | 409, why: string): void {
    expectStatus(answer, status, why);
    seen.strangerRefused++;
  }

  interface World {
    readonly tag: string;
    readonly gate: string;
    readonly type: string;
    readonly sides: Record<Who, Side>;
  }

  async function world(): Promise<World> {
    const tag = newTag();
    const gate = `pool-gate-${tag}`;
    await asAdmin(host, 'PUT', `/api/gates/${gate}`, {});
    const side = async (who: Who): Promise<Side> => ({
      headers: await submitterHeaders(host, key, `pool-${who}-${tag}`),
      runs: [],
      waiting: 0,
      schedules: [],
      producers: new Map(),
      events: [],
      held: [],
      made: new Set(),
    });
    return { tag, gate, type: `pool-${tag}`, sides: { a: await side('a'), b: await side('b') } };
  }

  /**
   * Opens a long poll or an event stream on the run's gate; each is in place before the next
   * operation, so the server sees them in the model's order.
   */
  async function hold(w: World, who: Who, kind: 'poll' | 'watch'): Promise<void> {
    const side = w.sides[who];
    open(host, side.headers, side.held, kind === 'poll' ? `/api/gates/${w.gate}/wait?timeout=110` : `/api/gates/${w.gate}/events`, share);
    await heldAsModelled(w, who);
  }

  async function heldAsModelled(w: World, who: Who): Promise<void> {
    seen.preempted += await heldMatches(host, w.sides[who].headers, w.sides[who].held, share);
  }

  /** One operation, and what its answer must be. */
  async function run(w: World, { who, kind, pick }: Op, serial: number): Promise<void> {
    const me = w.sides[who];
    const them = w.sides[other(who)];
    const theirRun = nth(them.runs, pick);
    const theirSchedule = nth(them.schedules, pick);
    switch (kind) {
      case 'startRun': {
        const runId = `${who}-${serial}`;
        const answer = await send(me, 'POST', `/api/gates/${w.gate}/runs`, { runId, action: { type: 'none' } });
        if (me.waiting >= share) {
          expectStatus(answer, 429, `${who} over its share of the gate's waiters`);
          seen.overShare++;
          return;
        }
        expectStatus(answer, 202, `${who} starts a run`);
        me.runs.push(runId);
        me.waiting++;
        return;
      }
      case 'readOwnRun': {
        const runId = nth(me.runs, pick);
        if (runId !== undefined) expectStatus(await send(me, 'GET', `/api/gates/${w.gate}/runs/${runId}`), 200, 'own run');
        return;
      }
      case 'readOtherRun':
        if (theirRun !== undefined) refused(await send(me, 'GET', `/api/gates/${w.gate}/runs/${theirRun}`), 404, "other's run");
        return;
      case 'takeOtherRunId':
        if (theirRun !== undefined)
          refused(
            await send(me, 'POST', `/api/gates/${w.gate}/runs`, { runId: theirRun, action: { type: 'none' } }),
            409,
            "other's run id",
          );
        return;
      case 'append':
      case 'appendAsTheirs': {
        // The other's producer id (and its last seq) names a producer of this caller's own.
        const theirs = kind === 'appendAsTheirs' ? [...them.producers].at(pick % Math.max(1, them.producers.size)) : undefined;
        const producer = theirs?.[0] ?? `p${pick % 3}`;
        const seq = theirs?.[1] ?? (me.producers.get(producer) ?? 0) + 1;
        const known = me.producers.get(producer);
        const answer = await send(me, 'POST', `/api/streams/${w.type}/events`, { producer, seq, data: { who, serial } });
        if (known === undefined && me.producers.size >= share) {
          expectStatus(answer, 429, `${who} over its share of the writer's producers`);
          seen.overShare++;
          return;
        }
        expectStatus(answer, 202, `${who} appends as ${producer}`);
        const fresh = known === undefined || seq > known;
        expect({ accepted: answer.body.accepted, duplicates: answer.body.duplicates }).toEqual(
          fresh ? { accepted: 1, duplicates: 0 } : { accepted: 0, duplicates: 1 },
        );
        if (theirs !== undefined && fresh) seen.sharedProducerIds++;
        if (fresh) {
          me.producers.set(producer, seq);
          me.events.push(`${producer}/${seq}/${serial}`);
        }
        return;
      }
      case 'createSchedule': {
        const target = { type: 'queueMessage', queue: 'app-pool', message: { who } };
        const answer = await send(me, 'POST', '/api/schedules', { at: '2099-01-01T00:00:00Z', target });
        if (me.schedules.length >= share) {
          expectStatus(answer, 429, `${who} over its share of the live schedules`);
          seen.overShare++;
          return;
        }
        expectStatus(answer, 201, `${who} creates a schedule`);
        me.schedules.push(String(answer.body.id));
        return;
      }
      case 'readOwnSchedule': {
        const id = nth(me.schedules, pick);
        if (id !== undefined) expectStatus(await send(me, 'GET', `/api/schedules/${id}`), 200, 'own schedule');
        return;
      }
      case 'readOtherSchedule':
        if (theirSchedule !== undefined) refused(await send(me, 'GET', `/api/schedules/${theirSchedule}`), 404, "other's schedule");
        return;
      case 'cancelSchedule':
      case 'triggerSchedule': {
        // Operator routes (admin key): the host refuses a function key, whoever's schedule it is.
        const id = nth(pick % 2 === 0 ? me.schedules : them.schedules, pick);
        if (id === undefined) return;
        const [method, path] = kind === 'cancelSchedule' ? ['DELETE', `/api/schedules/${id}`] : ['POST', `/api/schedules/${id}/trigger`];
        refused(await send(me, method, path), 401, `${kind} as a submitter`);
        return;
      }
      case 'poll':
      case 'watch':
        return hold(w, who, kind);
      case 'hangUp': {
        const h = nth(live(me.held), pick);
        if (h === undefined) return;
        h.hungUp = true;
        h.abort.abort();
        // Its place goes back once the server sees the client gone.
        return heldAsModelled(w, who);
      }
      case 'held':
        return heldAsModelled(w, who);
      case 'increment':
      case 'next': {
        const pool = kind === 'increment' ? 'counters' : 'sequences';
        const name = `${pool === 'counters' ? 'c' : 's'}-${who}-${pick % 3}-${w.tag}`;
        const answer =
          pool === 'counters'
            ? await send(me, 'POST', `/api/counters/${name}/increment`, { by: 1 + (pick % 5) })
            : await send(me, 'POST', `/api/sequences/${name}/next`, { count: 1 });
        if (!me.made.has(name)) {
          const mine = [...me.made].filter((n) => n.startsWith(pool === 'counters' ? 'c-' : 's-')).length;
          // The share is decided before the pool's room (shared/shares.ts `verdict`).
          if (mine >= share || autoCreated[pool] >= 8) {
            expectStatus(answer, mine >= share ? 429 : 409, `${who} auto-creates a ${pool} past its share or the pool`);
            if (mine >= share) seen.overShare++;
            return;
          }
          autoCreated[pool]++;
          me.made.add(name);
        }
        expectStatus(answer, pool === 'counters' ? 202 : 200, `${who} uses ${name}`);
        if (pool === 'counters') counterSums.set(name, (counterSums.get(name) ?? 0) + 1 + (pick % 5));
        return;
      }
      case 'incrementOther': {
        // Counters belong to nobody: another's counter takes no place of this caller's share.
        const name = nth(
          [...them.made].filter((n) => n.startsWith('c-')),
          pick,
        );
        if (name === undefined) return;
        expectStatus(await send(me, 'POST', `/api/counters/${name}/increment`, { by: 1 }), 202, `${who} increments ${name}`);
        counterSums.set(name, (counterSums.get(name) ?? 0) + 1);
        return;
      }
      case 'release': {
        // The generation ends: its waiters proceed and its held requests are answered; the next one counts from nothing.
        await asAdmin(host, 'POST', `/api/gates/${w.gate}/release`, {});
        for (const s of Object.values(w.sides)) {
          s.waiting = 0;
          for (const h of s.held) h.hungUp = true;
        }
        await until(
          'every held request answered by the release',
          () => Promise.resolve(Object.values(w.sides).every((s) => s.held.every((h) => h.ended)) ? true : undefined),
          30_000,
        );
        await asAdmin(host, 'POST', `/api/gates/${w.gate}/reset`, {});
        return;
      }
    }
  }

  /** Afterwards: each caller's runs and schedules are its own and there, and every event it had accepted is in the log once. */
  async function intact(w: World): Promise<void> {
    const logged: LogLine[] = [];
    const where = new Map<string, { partition: string; resource: string }>();
    for (const who of ['a', 'b'] as const) {
      const me = w.sides[who];
      for (const runId of me.runs) expectStatus(await send(me, 'GET', `/api/gates/${w.gate}/runs/${runId}`), 200, `${who}'s run after`);
      for (const id of me.schedules) {
        const view = await send(me, 'GET', `/api/schedules/${id}`);
        expect({ status: view.status, state: view.body.state }).toEqual({
          status: 200,
          state: expect.stringMatching(/^(pending|active)$/),
        });
      }
      for (const h of me.held) h.abort.abort();
      const route = await send(me, 'GET', `/api/streams/${w.type}`);
      if (route.status === 200) where.set(w.type, route.body.route as { partition: string; resource: string });
    }
    const at = where.get(w.type);
    if (at !== undefined && (w.sides.a.events.length > 0 || w.sides.b.events.length > 0)) {
      await asAdmin(host, 'POST', `/api/streams/${w.type}/flush`);
      const expected = (['a', 'b'] as const).flatMap((who) => w.sides[who].events.map((e) => `${who}:${e}`)).sort();
      await until(
        `the events of ${w.type} in the log`,
        async () => {
          logged.splice(0, logged.length, ...(await readLog(host, at.partition, at.resource)).filter((l) => l.type === w.type));
          return logged.length >= expected.length ? true : undefined;
        },
        30_000,
      );
      const got = logged.map((l) => {
        const data = l.data as { who: Who; serial: number };
        return `${data.who}:${l.producer}/${l.seq}/${data.serial}`;
      });
      expect(got.sort()).toEqual(expected);
    }
    // Every increment is counted, whoever made it.
    for (const name of [...w.sides.a.made, ...w.sides.b.made].filter((n) => n.startsWith('c-'))) {
      const value = await send(w.sides.a, 'GET', `/api/counters/${name}?consistent=true`);
      expect({ name, value: value.body.value }).toEqual({ name, value: counterSums.get(name) });
    }
  }

  /** The admin ends the run's schedules (the cap of 8 is the host's: the next run starts from nothing), and this test hangs up. */
  async function cleanUp(w: World): Promise<void> {
    for (const s of Object.values(w.sides)) {
      for (const h of s.held) h.abort.abort();
      for (const id of s.schedules) await asAdmin(host, 'DELETE', `/api/schedules/${id}`);
    }
  }

  test("neither caller reads, takes or cancels the other's runs, producers or schedules, nor holds more than its share of any pool", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 5, maxLength: 25 }), async (ops) => {
        const w = await world();
        try {
          let serial = 0;
          for (const o of ops) await run(w, o, serial++);
          for (const who of ['a', 'b'] as const) await heldAsModelled(w, who);
          await intact(w);
        } finally {
          await cleanUp(w);
        }
      }),
      { seed: 3637, numRuns: 20 },
    );
    expect(seen.overShare).toBeGreaterThan(0);
    expect(seen.strangerRefused).toBeGreaterThan(0);
    expect(seen.preempted).toBeGreaterThan(0);
    expect(seen.sharedProducerIds).toBeGreaterThan(0);
  }, 900_000);
});
