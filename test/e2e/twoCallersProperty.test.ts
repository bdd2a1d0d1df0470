/**
 * The property of issue #36's "Must hold": two identities interleave random operations across the
 * capabilities that belong to someone — submitting, reading, listing results, cancelling, leasing,
 * completing, asking who they are — and neither ever reads, cancels, leases or completes the other's
 * resources, neither holds more than its share of the open-job pool, and afterwards each one's jobs
 * hold exactly what it did to them. fast-check draws the sequences from a fixed seed (a failure
 * prints its seed and shrinks to the shortest sequence that still fails); each run gets callers and
 * processors of its own on one host.
 *
 * The callers are Tallyho credentials (keys mode: each request also carries the function key). Each
 * is a submitter and, by its processor's declaration, the only worker of its own processor.
 */
import { randomBytes } from 'node:crypto';

import fc from 'fast-check';

import { describeOwnHost, type E2eHost, hostLabel } from './support/harness';
import { newTag } from './support/identities';
import { type Answer, asAdmin, nth, other, sendAs, startCredentialedHost, submitterHeaders, type Who } from './support/twoCallers';

const kinds = [
  'submit',
  'readOwn',
  'readOther',
  'resultsOther',
  'cancelOwn',
  'cancelOther',
  'leaseOwn',
  'completeOwn',
  'leaseOther',
  'completeOther',
  'me',
] as const;

interface Op {
  readonly who: Who;
  readonly kind: (typeof kinds)[number];
  readonly pick: number;
}

const op: fc.Arbitrary<Op> = fc.record({ who: fc.constantFrom<Who>('a', 'b'), kind: fc.constantFrom(...kinds), pick: fc.nat(50) });

/** Open jobs one caller may hold (TALLYHO_JOBS_MAX_OPEN_PER_OWNER here) of TALLYHO_JOBS_MAX_OPEN. */
const share = 2;

/** What the runs exercised, so the property is never met by doing nothing. */
const seen = { refusedOverShare: 0, leased: 0, strangerRefused: 0 };

interface Lease {
  readonly leaseId: string;
  readonly items: readonly { id: string; jobId: string }[];
}

/** What each caller made and did in one run: the model the answers are held to. */
interface Side {
  readonly headers: Record<string, string>;
  readonly processor: string;
  readonly jobs: string[];
  readonly cancelled: Set<string>;
  readonly leases: Lease[];
}

describeOwnHost(`two callers interleaving at random (${hostLabel()}, keys on, credentials)`, () => {
  let host: E2eHost;
  const key = randomBytes(32);

  beforeAll(async () => {
    host = await startCredentialedHost(key, {
      TALLYHO_JOBS_MAX_OPEN_PER_OWNER: String(share),
    });
  }, 120_000);

  afterAll(async () => {
    await host?.dispose();
  });

  const send = (side: Side, method: string, path: string, body?: unknown): Promise<Answer> =>
    sendAs(host, side.headers, method, path, body);

  /** Two fresh callers and their processors (a run's jobs never meet another run's). */
  async function sides(): Promise<Record<Who, Side>> {
    const tag = newTag();
    const make = async (who: Who): Promise<Side> => {
      const name = `prop-${who}-${tag}`;
      const processor = `prop-${who}-${tag}`;
      await asAdmin(host, 'PUT', `/api/processors/${processor}`, {
        type: 'external',
        batchSize: 5,
        leaseSeconds: 300,
        workers: [`cred:${name}`],
      });
      return { headers: await submitterHeaders(host, key, name), processor, jobs: [], cancelled: new Set(), leases: [] };
    };
    return { a: await make('a'), b: await make('b') };
  }

  /** A stranger's call: exactly the refusal the route table gives (404 for an owned resource, 403 for another's processor). */
  function refused(answer: { status: number }, status: 403 | 404): void {
    expect(answer.status).toBe(status);
    seen.strangerRefused++;
  }

  /** One operation, and what its answer must be. */
  async function run(s: Record<Who, Side>, { who, kind, pick }: Op, serial: number): Promise<void> {
    const me = s[who];
    const them = s[other(who)];
    const theirJob = nth(them.jobs, pick);
    const ownJob = nth(me.jobs, pick);
    switch (kind) {
      case 'submit': {
        const items = Array.from({ length: 1 + (pick % 3) }, (_, i) => ({ id: `${who}-${serial}-${i}` }));
        const answer = await send(me, 'POST', '/api/jobs', { processor: me.processor, items });
        expect([202, 429]).toContain(answer.status);
        if (answer.status === 202) me.jobs.push(String(answer.body.id));
        else seen.refusedOverShare++;
        return;
      }
      case 'readOwn':
        if (ownJob !== undefined) expect((await send(me, 'GET', `/api/jobs/${ownJob}`)).status).toBe(200);
        return;
      case 'readOther':
        if (theirJob !== undefined) refused(await send(me, 'GET', `/api/jobs/${theirJob}`), 404);
        return;
      case 'resultsOther':
        if (theirJob !== undefined) refused(await send(me, 'GET', `/api/jobs/${theirJob}/results`), 404);
        return;
      case 'cancelOwn': {
        if (ownJob === undefined) return;
        const answer = await send(me, 'DELETE', `/api/jobs/${ownJob}`);
        expect([202, 409]).toContain(answer.status);
        if (answer.status === 202) me.cancelled.add(ownJob);
        return;
      }
      case 'cancelOther':
        if (theirJob !== undefined) refused(await send(me, 'DELETE', `/api/jobs/${theirJob}`), 404);
        return;
      case 'leaseOwn': {
        const answer = await send(me, 'POST', `/api/processors/${me.processor}/leases`, { wait: 0, maxItems: 5 });
        expect([200, 204]).toContain(answer.status);
        if (answer.status !== 200) return;
        const lease = answer.body as unknown as Lease;
        // A worker of its own processor gets its own owner's items only.
        for (const item of lease.items) expect(item.id.startsWith(`${who}-`)).toBe(true);
        me.leases.push(lease);
        seen.leased++;
        return;
      }
      case 'completeOwn': {
        const lease = me.leases.shift();
        if (lease === undefined) return;
        const results = lease.items.map((i) => ({ id: i.id, status: 'succeeded', output: `${who}:${i.id}` }));
        // 409: its job was cancelled meanwhile (its leases are refused from then on).
        expect([200, 409]).toContain((await send(me, 'POST', `/api/leases/${lease.leaseId}/complete`, { results })).status);
        return;
      }
      case 'leaseOther':
        refused(await send(me, 'POST', `/api/processors/${them.processor}/leases`, { wait: 0 }), 403);
        return;
      case 'completeOther': {
        const lease = nth(them.leases, pick);
        if (lease === undefined) return;
        const results = lease.items.map((i) => ({ id: i.id, status: 'failed', reason: 'forged' }));
        refused(await send(me, 'POST', `/api/leases/${lease.leaseId}/complete`, { results }), 403);
        return;
      }
      case 'me': {
        const answer = await send(me, 'GET', '/api/callers/me');
        expect(answer.status).toBe(200);
        expect((answer.body.holds as { openJobs: number }).openJobs).toBeLessThanOrEqual(share);
        return;
      }
    }
  }

  /** Afterwards: each caller's jobs are there, cancelled only by it, and hold only what its own worker recorded. */
  async function intact(s: Record<Who, Side>): Promise<void> {
    for (const who of ['a', 'b'] as const) {
      const me = s[who];
      for (const job of me.jobs) {
        const view = await send(me, 'GET', `/api/jobs/${job}`);
        expect(view.status).toBe(200);
        if (!me.cancelled.has(job)) expect(['cancelling', 'cancelled']).not.toContain(view.body.state);
        const results = await send(me, 'GET', `/api/jobs/${job}/results?maxPageSize=50`);
        for (const r of results.body.items as { id: string; status: string; output?: unknown }[]) {
          expect(r.id.startsWith(`${who}-`)).toBe(true);
          if (r.status === 'succeeded') expect(r.output).toBe(`${who}:${r.id}`);
          else
            expect({ status: r.status, cancelledByOwner: me.cancelled.has(job) }).toEqual({ status: 'cancelled', cancelledByOwner: true });
        }
      }
      const held = await send(me, 'GET', '/api/callers/me');
      expect((held.body.holds as { openJobs: number }).openJobs).toBeLessThanOrEqual(share);
    }
  }

  test("neither caller reads, cancels, leases or completes the other's work, nor holds more than its share", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 5, maxLength: 30 }), async (ops) => {
        const s = await sides();
        let serial = 0;
        for (const o of ops) await run(s, o, serial++);
        await intact(s);
      }),
      { seed: 3636, numRuns: 30 },
    );
    expect(seen.refusedOverShare).toBeGreaterThan(0);
    expect(seen.leased).toBeGreaterThan(0);
    expect(seen.strangerRefused).toBeGreaterThan(0);
  }, 600_000);
});
