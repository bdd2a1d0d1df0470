/**
 * Sequences under load on every instance at once: small blocks (5–50 numbers, a refill target of
 * one second) so the instances reserve blocks all the time and race for the one row, and a kill
 * always leaves blocks behind. Every request carries an Idempotency-Key and is retried with it
 * until answered, so an answer lost with a killed instance comes back from another.
 */
import { checkSequences, type NumberRange } from '../checks/sequences';
import { sleep } from '../history';
import { int, tableRows } from '../storage';
import { type CheckInput, type CheckReport, logEvents, randomInt, type RunContext, type Workload } from '../workload';

const name = 'so-orders';
const start = 1;

function ranges(value: unknown): NumberRange[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((r) => {
    const { lo, hi } = (r ?? {}) as { lo?: unknown; hi?: unknown };
    return typeof lo === 'number' && typeof hi === 'number' ? [{ lo, hi }] : [];
  });
}

async function caller(ctx: RunContext, loop: number): Promise<void> {
  for (let n = 0; !ctx.loadEnded.aborted; n++) {
    const count = randomInt(1, 5);
    const key = `so-seq-${loop}-${n}`;
    // Retried with the same key until answered: the numbers of a lost answer come back.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const { op, reply } = await ctx.client.call<{ numbers?: number[] }>('sequences', 'next', 'POST', `/api/sequences/${name}/next`, {
        body: { count },
        headers: { 'idempotency-key': key },
        data: { count, key },
        timeoutMs: 20_000,
      });
      if (reply !== undefined && reply.status === 200) {
        op.data.answer = reply.body.numbers;
        break;
      }
      if (Date.now() > deadline) break;
      await sleep(200);
    }
    await sleep(randomInt(0, 20));
  }
}

export function sequencesWorkload(): Workload {
  return {
    capability: 'sequences',
    async setup(ctx) {
      const { reply } = await ctx.client.call('sequences', 'create', 'PUT', `/api/sequences/${name}`, {
        key: 'admin',
        body: { start, checkDigit: false, blockSize: { min: 5, max: 50 }, refillTargetSeconds: 1 },
      });
      if (reply === undefined || reply.status >= 300) throw new Error(`Creating sequence ${name} answered ${reply?.status}`);
    },
    async run(ctx) {
      await Promise.all(Array.from({ length: 3 * ctx.scale }, (_, i) => caller(ctx, i)));
    },
    async drain() {
      // Nothing runs after the answers.
    },
    async check(ctx: RunContext, input: CheckInput): Promise<CheckReport> {
      const rows = await tableRows(ctx.storage, 'sequences', `PartitionKey eq '${name}'`);
      const row = rows.find((r) => r.rowKey === 'sequence');
      const ops = ctx.history.of('sequences', 'next');
      // Retries of one key answer the same numbers: count each key's numbers once.
      const byKey = new Map<string, { numbers: number[]; instance: number | undefined }>();
      const unknown = new Map<string, number>();
      for (const op of ops) {
        const key = String(op.data.key);
        if (op.status === 200) {
          const body = op.data.answer as number[] | undefined;
          if (body !== undefined && !byKey.has(key)) byKey.set(key, { numbers: body, instance: op.instance });
        } else if (op.status === undefined || op.status >= 500) unknown.set(key, Number(op.data.count));
      }
      for (const key of byKey.keys()) unknown.delete(key);
      const killedBlocks: NumberRange[] = [];
      const stoppedBlocks: NumberRange[] = [];
      const loggedGaps: NumberRange[] = [];
      for (const life of input.lives) {
        const events = logEvents(life.output, ['sequence.block_reserved', 'sequence.gap']).filter((e) => e.sequence === name);
        for (const e of events) {
          if (e.event === 'sequence.gap') loggedGaps.push(...ranges(e.ranges));
          else if (typeof e.lo === 'number' && typeof e.hi === 'number')
            (life.how === 'kill' ? killedBlocks : stoppedBlocks).push({ lo: e.lo, hi: e.hi });
        }
      }
      return checkSequences({
        name,
        start,
        highWaterMark: row === undefined ? start : int(row.next),
        issued: [...byKey.values()],
        unknownCounts: [...unknown.values()],
        killedBlocks,
        stoppedBlocks,
        loggedGaps,
      });
    },
  };
}
