/**
 * Counters under load on every instance: one `hits` counter and one `sharded` counter, each taking
 * unkeyed increments by 1 (group-committed per instance; sent once) and keyed increments (their own
 * transaction; retried with the key until acknowledged), through the front door. The rollup timer
 * folds hits meanwhile (a 5 s safety window, so it runs during the load).
 */
import { checkCounters, type CounterFacts } from '../checks/counters';
import { sleep } from '../history';
import { int, tableRows } from '../storage';
import { randomInt, type RunContext, type Workload } from '../workload';

const counters = [
  { name: 'so-hits', settings: { mode: 'hits', partitions: 4, safetyWindowSeconds: 5 } },
  { name: 'so-shards', settings: { mode: 'sharded', partitions: 4 } },
] as const;

async function unkeyed(ctx: RunContext, name: string): Promise<void> {
  while (!ctx.loadEnded.aborted) {
    await ctx.client.call('counters', 'increment', 'POST', `/api/counters/${name}/increment`, { data: { name, by: 1 }, timeoutMs: 20_000 });
  }
}

async function keyed(ctx: RunContext, name: string, loop: number): Promise<void> {
  for (let n = 0; !ctx.loadEnded.aborted; n++) {
    const by = randomInt(1, 9);
    const key = `so-ctr-${name}-${loop}-${n}`;
    const deadline = Date.now() + 60_000;
    for (;;) {
      const { reply } = await ctx.client.call('counters', 'increment', 'POST', `/api/counters/${name}/increment`, {
        body: { by },
        headers: { 'idempotency-key': key },
        data: { name, by, key },
        timeoutMs: 20_000,
      });
      // A client's retry window (a real caller gives up too); what it achieved is checked, not how fast.
      // eslint-disable-next-line tallyho/no-elapsed-budget
      if (reply?.status === 202 || Date.now() > deadline) break;
      await sleep(200);
    }
  }
}

async function storedValue(storage: string, name: string): Promise<number> {
  const rows = await tableRows(storage, 'counterdata', `PartitionKey ge '${name}|' and PartitionKey lt '${name}}'`);
  let value = 0;
  for (const row of rows) {
    if (/^\d{13}-/.test(row.rowKey)) value += int(row.b);
    else if (row.rowKey === '~sum') value += int(row.c);
  }
  return value;
}

export function countersWorkload(): Workload {
  const readValues = new Map<string, number>();
  return {
    capability: 'counters',
    async setup(ctx) {
      for (const c of counters) {
        const { reply } = await ctx.client.call('counters', 'create', 'PUT', `/api/counters/${c.name}`, { key: 'admin', body: c.settings });
        if (reply === undefined || reply.status >= 300) throw new Error(`Creating counter ${c.name} answered ${reply?.status}`);
      }
    },
    async run(ctx) {
      const loops: Promise<void>[] = [];
      for (const c of counters)
        for (let i = 0; i < ctx.scale; i++) loops.push(unkeyed(ctx, c.name), unkeyed(ctx, c.name), keyed(ctx, c.name, i));
      await Promise.all(loops);
    },
    async drain(ctx) {
      for (const c of counters) {
        const { reply } = await ctx.client.call<{ value?: number }>('counters', 'read', 'GET', `/api/counters/${c.name}?consistent=true`);
        if (reply?.status === 200 && typeof reply.body.value === 'number') readValues.set(c.name, reply.body.value);
      }
    },
    async check(ctx) {
      const facts: CounterFacts[] = [];
      for (const c of counters) {
        const ops = ctx.history.of('counters', 'increment').filter((o) => o.data.name === c.name);
        const acknowledged: number[] = [];
        const unknown: number[] = [];
        const ackedKeys = new Set<string>();
        const unknownKeys = new Map<string, number>();
        for (const op of ops) {
          const by = Number(op.data.by);
          const key = op.data.key as string | undefined;
          const acked = op.status === 202;
          // A 4xx changed nothing; no answer (or the front door's 502) may have, and so may a 503 (docs/counters.md).
          const maybe = op.status === undefined || op.status >= 500;
          if (key === undefined) {
            if (acked) acknowledged.push(by);
            else if (maybe) unknown.push(by);
          } else if (acked && !ackedKeys.has(key)) {
            ackedKeys.add(key);
            acknowledged.push(by);
          } else if (maybe) unknownKeys.set(key, by);
        }
        for (const [key, by] of unknownKeys) if (!ackedKeys.has(key)) unknown.push(by);
        facts.push({
          name: c.name,
          storedValue: await storedValue(ctx.storage, c.name),
          readValue: readValues.get(c.name),
          acknowledged,
          unknown,
        });
      }
      return checkCounters(facts);
    },
  };
}
