/**
 * Schedules while instances come and go (real host only: a schedule is an orchestration, and only
 * the real host's instances share one task hub). One-offs are created through the front door every
 * few seconds, each due 5–20 s later and putting a message naming itself on `app-scaleout`; one
 * cron schedule fires every minute on the same queue. The checker counts each schedule's messages
 * against the fires its row records.
 */
import { randomBytes } from 'node:crypto';

import { checkSchedules, type ScheduleFacts, type ScheduleRun } from '../checks/schedules';
import { sleep, untilAnswered } from '../history';
import { drainQueue } from '../storage';
import { randomInt, type RunContext, type Workload } from '../workload';

const queue = 'app-scaleout';

interface ScheduleView {
  state?: string;
  runCount?: number;
  runs?: ScheduleRun[];
}

async function create(ctx: RunContext, body: Record<string, unknown>): Promise<boolean> {
  const reply = await untilAnswered(
    () => ctx.client.call('schedules', 'create', 'POST', '/api/schedules', { body, data: { id: body.id } }),
    Date.now() + 60_000,
  );
  return reply?.status === 201 || reply?.status === 200;
}

async function view(ctx: RunContext, id: string): Promise<ScheduleView | undefined> {
  const reply = await untilAnswered(
    () => ctx.client.call<ScheduleView>('schedules', 'read', 'GET', `/api/schedules/${id}`),
    Date.now() + 30_000,
  );
  return reply?.status === 200 ? reply.body : undefined;
}

export function schedulesWorkload(): Workload {
  const tag = randomBytes(3).toString('hex');
  const cronId = `so-cron-${tag}`;
  const onceDue = new Map<string, number>();
  const views = new Map<string, ScheduleView | undefined>();
  return {
    capability: 'schedules',
    async setup(ctx) {
      const target = { type: 'queueMessage', queue, message: { schedule: cronId } };
      if (!(await create(ctx, { id: cronId, cron: '0 * * * * *', target }))) throw new Error(`Creating schedule ${cronId} failed`);
    },
    async run(ctx) {
      for (let n = 0; !ctx.loadEnded.aborted; n++) {
        const id = `so-once-${tag}-${n}`;
        const due = Date.now() + randomInt(5_000, 20_000);
        const target = { type: 'queueMessage', queue, message: { schedule: id } };
        if (await create(ctx, { id, at: new Date(due).toISOString(), target })) onceDue.set(id, due);
        await sleep(randomInt(2_000, 4_000) / ctx.scale, ctx.loadEnded);
      }
    },
    async drain(ctx, deadline) {
      await untilAnswered(() => ctx.client.call('schedules', 'cancel', 'DELETE', `/api/schedules/${cronId}`), deadline);
      for (const id of onceDue.keys()) {
        for (;;) {
          const v = await view(ctx, id);
          if (v?.state === 'completed' || Date.now() > deadline) {
            views.set(id, v);
            break;
          }
          await sleep(1000);
        }
      }
      views.set(cronId, await view(ctx, cronId));
    },
    async check(ctx) {
      const messages = new Map<string, number[]>();
      for (const m of await drainQueue(ctx.storage, queue)) {
        const id = String((JSON.parse(m.text) as { schedule?: string }).schedule);
        messages.set(id, [...(messages.get(id) ?? []), m.insertedOn]);
      }
      const facts: ScheduleFacts[] = [cronId, ...onceDue.keys()].map((id) => {
        const v = views.get(id);
        return {
          id,
          kind: id === cronId ? 'cron' : 'once',
          state: v?.state,
          runCount: v?.runCount ?? 0,
          runs: v?.runs ?? [],
          messages: messages.get(id) ?? [],
          ...(onceDue.has(id) ? { dueAt: onceDue.get(id) } : {}),
        };
      });
      const disruptions = ctx.history.ops
        .filter((o) => o.cap === 'chaos' && (o.kind === 'kill' || o.kind === 'stop'))
        .map((o) => ({ at: o.start }));
      return checkSchedules(facts, disruptions);
    },
  };
}
