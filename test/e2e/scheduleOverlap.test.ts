/**
 * Overlap policies (skip, bufferOne, allow), with runs that take real time: a real-clock host and a
 * slow local HTTPS webhook. (Shared helpers: support/schedules.ts.)
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type SelfSigned, selfSignedCert } from '../support/selfSignedCert';
import { type E2eHost, ownHostTest, startE2eHost } from './support/harness';
import { api, body, quietTimers, ran, type Schedule, until } from './support/schedules';
import { unique } from './support/names';
import { until as waitUntil } from './support/wait';

/** One webhook call as the endpoint saw it (its own clock: the same machine's as the host's). */
interface Call {
  start: number;
  end: number;
  scheduledFor: string;
}

describe('overlap policies with a slow webhook (real clock)', () => {
  let tls: SelfSigned;
  const caFile = join(tmpdir(), `tallyho-e2e-ca-${randomBytes(4).toString('hex')}.pem`);
  let server: Server;
  let port = 0;
  let host: E2eHost;
  let s: ReturnType<typeof api>;
  const calls = new Map<string, Call[]>();
  const holdMs = 2500;

  beforeAll(async () => {
    tls = await selfSignedCert(['localhost']);
    writeFileSync(caFile, tls.cert);
    server = createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => {
        const start = Date.now();
        const payload = JSON.parse(text) as { scheduleId: string; scheduledFor: string };
        setTimeout(() => {
          const list = calls.get(payload.scheduleId) ?? [];
          list.push({ start, end: Date.now(), scheduledFor: payload.scheduledFor });
          calls.set(payload.scheduleId, list);
          res.writeHead(204).end();
        }, holdMs);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    host = await startE2eHost({
      env: {
        ...quietTimers,
        // Runs every second overlap a 2.5 s webhook; the floor for function-level crons would refuse them.
        TALLYHO_SCHEDULES_MIN_CRON_INTERVAL_SECONDS: '1',
        NODE_EXTRA_CA_CERTS: caFile,
        TALLYHO_SCHEDULES_WEBHOOK_ALLOWED_HOSTS: `localhost:${port}`,
        TALLYHO_SCHEDULES_WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true',
      },
    });
    s = api(host);
  });
  afterAll(async () => {
    await host.dispose();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const overlapping = (list: { start: number; end: number }[]): boolean =>
    list.some((a, i) => list.some((b, j) => i !== j && a.start < b.end && b.start < a.end));
  /** Each webhook call with the one that started next. */
  const consecutive = (list: Call[]): [Call, Call][] => {
    const sorted = [...list].sort((a, b) => a.start - b.start);
    return sorted.slice(1).map((after, i) => [sorted[i] as Call, after]);
  };

  ownHostTest('skip drops fires during a run, bufferOne holds one and runs it next, allow runs them side by side', async () => {
    const ids = { skip: unique('ov-skip'), bufferOne: unique('ov-buffer'), allow: unique('ov-allow') };
    for (const [overlap, id] of Object.entries(ids)) {
      body(
        await s.create({
          id,
          cron: '* * * * * *',
          overlap,
          catchUp: 'none',
          target: { type: 'webhook', url: `https://localhost:${port}/hook` },
        }),
        201,
      );
    }
    // Until every lower bound asserted below has been seen: at least two 2.5 s runs of `skip`, a held
    // fire of `bufferOne`, overlapping runs of `allow` — however long that takes (a fresh host's first
    // fire came 8 s late once in a CI run). The bounds only grow while the fires go on, so stopping
    // then loses nothing.
    const heldOver = (list: Call[]) => consecutive(list).filter(([before, after]) => Date.parse(after.scheduledFor) <= before.end - 1000);
    const skippedForOverlap = (x: Schedule) => x.runs.filter((r) => r.outcome === 'skipped' && r.reason === 'overlap').length;
    const heldRuns = (x: Schedule) => ran(x).filter((r) => r.startedAt !== undefined && Date.parse(r.startedAt) - Date.parse(r.at) >= 1000);
    await waitUntil(
      'each overlap policy at work',
      async () => {
        const [skip, buffer, allow] = await Promise.all([ids.skip, ids.bufferOne, ids.allow].map(async (id) => (await s.get(id)).body));
        if (skip === undefined || buffer === undefined || allow === undefined) return undefined;
        const seen =
          ran(skip).length >= 2 &&
          skippedForOverlap(skip) >= 2 &&
          heldOver(calls.get(ids.bufferOne) ?? []).length >= 1 &&
          heldRuns(buffer).length >= 1 &&
          skippedForOverlap(buffer) >= 1 &&
          overlapping(calls.get(ids.allow) ?? []) &&
          ran(allow).length > ran(skip).length;
        return seen ? true : undefined;
      },
      undefined,
      500,
    );
    for (const id of Object.values(ids)) body(await s.pause(id), 200);
    for (const id of Object.values(ids)) {
      await until(
        `${id} idle`,
        () => s.get(id),
        (r) => !r.body.runs.some((x) => x.outcome === 'running'),
      );
    }
    const view = async (id: string) => (await s.get(id)).body;
    const skip = await view(ids.skip);
    const buffer = await view(ids.bufferOne);
    const allow = await view(ids.allow);

    // skip: never two runs at once, and fires during a run were recorded as skipped.
    expect(overlapping(calls.get(ids.skip) ?? [])).toBe(false);
    expect(ran(skip).length).toBeGreaterThanOrEqual(2);
    expect(skippedForOverlap(skip)).toBeGreaterThanOrEqual(2);
    expect(ran(skip).every((r) => r.outcome === 'succeeded')).toBe(true);
    // Each run is the newest fire when the schedule learnt the run before had ended, so it came due
    // less than one cron interval before that end (however loaded the machine): nothing was held.
    expect(heldOver(calls.get(ids.skip) ?? [])).toEqual([]);

    // bufferOne: never two at once; a fire that came due early in a run is held and is the very next
    // run (no fresher fire runs before it), although the run it waited for ended a second or more after its time.
    const bufferCalls = calls.get(ids.bufferOne) ?? [];
    expect(overlapping(bufferCalls)).toBe(false);
    expect(heldOver(bufferCalls).length).toBeGreaterThanOrEqual(1);
    expect(heldRuns(buffer).length).toBeGreaterThanOrEqual(1);
    expect(buffer.runs.some((r) => r.outcome === 'skipped' && r.reason === 'overlap')).toBe(true);

    // allow: runs overlap and no fire was skipped.
    expect(overlapping(calls.get(ids.allow) ?? [])).toBe(true);
    expect(allow.runs.some((r) => r.outcome === 'skipped')).toBe(false);
    expect(ran(allow).length).toBeGreaterThan(ran(skip).length);
    for (const id of Object.values(ids)) body(await s.cancel(id), 200);
  });
});
