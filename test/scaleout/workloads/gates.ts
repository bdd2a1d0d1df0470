/**
 * Gates under load: two gates, each cycling through generations. A cycle opens a long poll and an
 * event stream on every instance (directly, not through the front door, so each instance's watcher
 * is exercised), registers runs through the front door (half with an `enqueue` action), releases
 * the gate through the front door, registers late joiners, waits for every watcher to hear of the
 * release, and resets the gate for the next generation.
 */
import { randomBytes } from 'node:crypto';

import { checkGates, type RegisteredRun, type Release, type RunView, type StoredRun, type Watcher } from '../checks/gates';
import { type Reply, sleep, untilAnswered } from '../history';
import { drainQueue, int, tableRows } from '../storage';
import { type CheckInput, randomInt, type RunContext, type Workload } from '../workload';

interface GateView {
  readonly generation: number;
  readonly state: string;
  readonly releasedAt: string | null;
}

interface OpenWatcher {
  readonly gate: string;
  readonly generation: number;
  readonly instance: number;
  readonly kind: 'longPoll' | 'events';
  readonly openedAt: number;
  heardAt: number | undefined;
  /** When the cycle stopped waiting for it. */
  closedAt: number | undefined;
}

/** What one run of the workload records beyond the history. */
interface State {
  readonly registered: RegisteredRun[];
  readonly releases: Release[];
  readonly watchers: OpenWatcher[];
  readonly views: RunView[];
}

const gateNames = (ctx: RunContext): string[] => Array.from({ length: 2 * ctx.scale }, (_, i) => `so-gate-${i}`);

/** Reads an event stream until a `released` event of `generation` (or later) arrives. */
async function streamUntilReleased(ctx: RunContext, w: OpenWatcher, signal: AbortSignal): Promise<void> {
  while (!signal.aborted && w.heardAt === undefined) {
    const url = ctx.client.url(`/api/gates/${w.gate}/events`, w.instance);
    if (url === undefined || !ctx.isUp(w.instance)) return;
    try {
      const res = await fetch(url, { headers: ctx.client.headers(), signal });
      const reader = res.body?.getReader();
      if (reader === undefined) return;
      let text = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += Buffer.from(value).toString('utf8');
        for (let end = text.indexOf('\n\n'); end >= 0; end = text.indexOf('\n\n')) {
          const block = text.slice(0, end);
          text = text.slice(end + 2);
          if (!/^event: released$/m.test(block)) continue;
          const data = /^data: (.*)$/m.exec(block)?.[1];
          const gate = data === undefined ? undefined : (JSON.parse(data) as GateView);
          if (gate !== undefined && gate.generation >= w.generation) w.heardAt ??= Date.now();
        }
        if (w.heardAt !== undefined) {
          await reader.cancel();
          return;
        }
      }
    } catch {
      // The instance went down, or the cycle ended: the loop's condition decides.
    }
    await sleep(200, signal);
  }
}

async function longPollUntilReleased(ctx: RunContext, w: OpenWatcher, signal: AbortSignal): Promise<void> {
  while (!signal.aborted && w.heardAt === undefined && ctx.isUp(w.instance)) {
    const { reply } = await ctx.client.call<{ released?: boolean; gate?: GateView }>(
      'gates',
      'wait',
      'GET',
      `/api/gates/${w.gate}/wait?timeout=60&generation=${w.generation}`,
      { instance: w.instance, timeoutMs: 70_000, signal, data: { gate: w.gate, generation: w.generation } },
    );
    if (reply?.status === 200 && reply.body.released === true) w.heardAt = Date.now();
    else if (reply?.status !== 200) await sleep(200, signal);
  }
}

async function register(ctx: RunContext, st: State, gate: string, runId: string, action: 'none' | 'enqueue', late: boolean): Promise<void> {
  const body = { runId, action: action === 'none' ? { type: 'none' } : { type: 'enqueue', payload: { runId } } };
  const reply = await untilAnswered(
    () => ctx.client.call('gates', 'register', 'POST', `/api/gates/${gate}/runs`, { body, data: { gate, runId, action } }),
    Date.now() + 60_000,
  );
  if (reply?.status !== 202) return;
  const run: RegisteredRun = { gate, runId, action, late };
  if (late) {
    const status = await untilAnswered(
      () => ctx.client.call<{ state?: string; late?: boolean }>('gates', 'runStatus', 'GET', `/api/gates/${gate}/runs/${runId}`),
      Date.now() + 30_000,
    );
    st.registered.push({
      ...run,
      proceededAtOnce: status?.body.state !== 'waiting' && status?.status === 200,
      lateFlag: status?.body.late,
    });
  } else st.registered.push(run);
}

async function cycle(ctx: RunContext, st: State, gate: string): Promise<void> {
  const current = await untilAnswered(() => ctx.client.call<GateView>('gates', 'read', 'GET', `/api/gates/${gate}`), Date.now() + 60_000);
  if (current?.status !== 200 || current.body.state !== 'closed') return;
  const generation = current.body.generation;
  const stop = new AbortController();
  const watching: Promise<void>[] = [];
  for (let i = 0; i < ctx.instances; i++) {
    if (!ctx.isUp(i)) continue;
    for (const kind of ['longPoll', 'events'] as const) {
      const w: OpenWatcher = { gate, generation, instance: i, kind, openedAt: Date.now(), heardAt: undefined, closedAt: undefined };
      st.watchers.push(w);
      watching.push(kind === 'events' ? streamUntilReleased(ctx, w, stop.signal) : longPollUntilReleased(ctx, w, stop.signal));
    }
  }
  const tag = randomBytes(3).toString('hex');
  await Promise.all(
    Array.from({ length: 8 }, (_, k) => register(ctx, st, gate, `g${generation}-${k}-${tag}`, k % 2 === 0 ? 'enqueue' : 'none', false)),
  );
  await sleep(randomInt(500, 2000));
  const release: Reply<{ gate?: GateView }> | undefined = await untilAnswered(
    () =>
      ctx.client.call<{ gate?: GateView }>('gates', 'release', 'POST', `/api/gates/${gate}/release`, {
        key: 'admin',
        body: { by: 'scaleout', note: `generation ${generation}` },
        data: { gate, generation },
      }),
    Date.now() + 120_000,
  );
  const releasedAt = release?.body.gate?.releasedAt;
  if (release?.status === 200 && releasedAt !== null && releasedAt !== undefined) {
    const op = ctx.history
      .of('gates', 'release')
      .filter((o) => o.data.gate === gate && o.status === 200)
      .at(-1);
    st.releases.push({ gate, generation, at: Date.parse(releasedAt), instance: op?.instance });
  }
  await Promise.all(
    Array.from({ length: 3 }, (_, k) => register(ctx, st, gate, `g${generation}-late${k}-${tag}`, k === 0 ? 'enqueue' : 'none', true)),
  );
  // Every watcher should hear within an interval or two; ten seconds is a verdict, not a wait.
  await Promise.race([Promise.all(watching), sleep(10_000)]);
  stop.abort();
  await Promise.all(watching);
  for (const w of st.watchers) if (w.gate === gate && w.generation === generation) w.closedAt ??= Date.now();
  await untilAnswered(
    () => ctx.client.call('gates', 'reset', 'POST', `/api/gates/${gate}/reset`, { key: 'admin', body: {} }),
    Date.now() + 60_000,
  );
}

async function readViews(ctx: RunContext, st: State, deadline: number): Promise<void> {
  for (const run of st.registered) {
    for (;;) {
      const reply = await untilAnswered(
        () =>
          ctx.client.call<{ state?: string; release?: { generation?: number } | null; action?: unknown }>(
            'gates',
            'runStatus',
            'GET',
            `/api/gates/${run.gate}/runs/${run.runId}`,
          ),
        deadline,
      );
      const body = reply?.body;
      const done = body?.state !== 'waiting' && (run.action === 'none' || body?.action !== null || body?.state === 'failed');
      if ((done && reply?.status === 200) || Date.now() > deadline) {
        st.views.push({
          gate: run.gate,
          runId: run.runId,
          state: body?.state ?? 'unknown',
          releaseGeneration: body?.release?.generation ?? undefined,
        });
        break;
      }
      await sleep(1000);
    }
  }
}

export function gatesWorkload(): Workload {
  const st: State = { registered: [], releases: [], watchers: [], views: [] };
  return {
    capability: 'gates',
    async setup(ctx) {
      for (const gate of gateNames(ctx)) {
        const { reply } = await ctx.client.call('gates', 'create', 'PUT', `/api/gates/${gate}`, { key: 'admin' });
        if (reply === undefined || reply.status >= 300) throw new Error(`Creating gate ${gate} answered ${reply?.status}`);
      }
    },
    async run(ctx) {
      await Promise.all(
        gateNames(ctx).map(async (gate) => {
          while (!ctx.loadEnded.aborted) await cycle(ctx, st, gate);
        }),
      );
    },
    async drain(ctx, deadline) {
      await readViews(ctx, st, deadline);
    },
    async check(ctx: RunContext, input: CheckInput) {
      const stored: StoredRun[] = [];
      const releaseRows = new Map<string, number[]>();
      for (const gate of gateNames(ctx)) {
        const rows = await tableRows(ctx.storage, 'gates', `PartitionKey eq '${gate}'`);
        releaseRows.set(
          gate,
          rows.filter((r) => r.rowKey.startsWith('rel-')).map((r) => int(r.generation)),
        );
        for (const r of rows.filter((row) => row.rowKey.startsWith('run-')))
          stored.push({
            gate,
            runId: String(r.runId),
            generation: int(r.generation),
            late: r.late === true,
            actionType: String(r.actionType),
            actionState: String(r.actionState),
          });
      }
      const actionMessages = (await drainQueue(ctx.storage, 'gate-actions')).map((m) => {
        const body = JSON.parse(m.text) as { gate?: string; runId?: string };
        return { gate: String(body.gate), runId: String(body.runId) };
      });
      const losses = ctx.history.ops.filter((o) => o.cap === 'chaos' && (o.kind === 'kill' || o.kind === 'stop'));
      const lost = (w: OpenWatcher): boolean =>
        losses.some((o) => o.data.instance === w.instance && o.start >= w.openedAt && o.start <= (w.heardAt ?? w.closedAt ?? Date.now()));
      const watchers: Watcher[] = st.watchers.map((w) => ({ ...w, instanceLost: lost(w) }));
      void input;
      return checkGates({ ...st, stored, releaseRows, actionMessages, watchers });
    },
  };
}
