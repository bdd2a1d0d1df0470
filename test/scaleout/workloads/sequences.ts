/**
 * Sequences under load on every instance at once: small blocks (5–50 numbers, a refill target of
 * one second) so the instances reserve blocks all the time and race for the one row, and a kill
 * always leaves blocks behind. Every request carries an Idempotency-Key and is retried with it
 * until answered, so an answer lost with a killed instance comes back from another.
 */
import { checkSequences, type NumberRange, type SequenceLife } from '../checks/sequences';
import { sleep } from '../history';
import { int, tableRows } from '../storage';
import { sequenceHistory } from '../storageTap';
import { type CheckInput, type CheckReport, type Life, randomInt, type RunContext, type Workload } from '../workload';

const name = 'so-orders';
const start = 1;

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
      // A client's retry window (a real caller gives up too); what it achieved is checked, not how fast.
      // eslint-disable-next-line tallyho/no-elapsed-budget
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
      // Every attempt without an answer may have taken numbers, even one whose key was answered later:
      // its instance may have died before storing the answer, and the retry then took new ones.
      const unknownCounts: number[] = [];
      for (const op of ops) {
        const key = String(op.data.key);
        if (op.status === 200) {
          const body = op.data.answer as number[] | undefined;
          if (body !== undefined && !byKey.has(key)) byKey.set(key, { numbers: body, instance: op.instance });
        } else if (op.status === undefined || op.status >= 500) unknownCounts.push(Number(op.data.count));
      }
      return checkSequences({
        name,
        start,
        highWaterMark: row === undefined ? start : int(row.next),
        issued: [...byKey.values()],
        unknownCounts,
        lives: sequenceLives(input, name),
      });
    },
  };
}

/**
 * Each instance life's blocks, from the row's history at the storage tap (not the logs, which a
 * killed real host loses the last of): a block belongs to the life of its instance that was running
 * when it was written, less what that life gave back.
 */
function sequenceLives(input: CheckInput, sequence: string): SequenceLife[] {
  const history = sequenceHistory(input.sequenceWrites, sequence, start);
  const lifeAt = (instance: number, at: number): Life | undefined =>
    input.lives.filter((l) => l.instance === instance && l.startedAt <= at).at(-1);
  const markAt = (at: number): number => input.sequenceWrites.filter((w) => w.sequence === sequence && w.at <= at).at(-1)?.next ?? start;
  return input.lives.map((life, index) => {
    const mine = (w: { instance: number; at: number }): boolean => lifeAt(w.instance, w.at) === life;
    const given = history.returned.filter(mine).map((r) => ({ lo: r.next, hi: r.hi }));
    const blocks = history.reserved.filter(mine).flatMap((b) => subtract({ lo: b.lo, hi: b.next }, given));
    const end = blocks.at(-1)?.hi;
    return {
      name: `instance ${life.instance} (life ${index})`,
      how: life.how,
      blocks,
      tailWasTopmost: end !== undefined && life.endedAt !== undefined && markAt(life.endedAt) === end,
    };
  });
}

function subtract(block: NumberRange, given: readonly NumberRange[]): NumberRange[] {
  let parts = [block];
  for (const g of given)
    parts = parts
      .flatMap((p) => [
        ...(g.lo > p.lo ? [{ lo: p.lo, hi: Math.min(p.hi, g.lo) }] : []),
        ...(g.hi < p.hi ? [{ lo: Math.max(p.lo, g.hi), hi: p.hi }] : []),
      ])
      .filter((p) => p.hi > p.lo);
  return parts;
}
