/**
 * Sequences across instances (docs/sequences.md). From the row's history (which instance life
 * reserved which block, and what it gave back) and the answers:
 * - no number is issued twice, and no number is reserved by two lives;
 * - an instance issues its numbers in order, so what a life leaves unused is the tail of its blocks:
 *   a killed life's tail is lost with it; a stopped life gives its tail back unless another instance
 *   reserved above it, else the tail is a gap (`sequence.gap`). Unused numbers before a life's last
 *   issued one can only be numbers taken by requests whose answer never came (each attempt counted).
 * Every gap is counted by where it came from.
 */
import { capped, type CheckReport, invariant } from '../workload';

export interface NumberRange {
  readonly lo: number;
  /** Exclusive. */
  readonly hi: number;
}

export interface SequenceLife {
  readonly name: string;
  readonly how: 'kill' | 'stop' | undefined;
  /** Its blocks in reservation order, less what it gave back. */
  readonly blocks: readonly NumberRange[];
  /** Its tail ended at the stored mark when it stopped: nobody had reserved above it, so it could have given it back. */
  readonly tailWasTopmost: boolean;
}

export interface SequenceFacts {
  readonly name: string;
  readonly start: number;
  /** The stored `next` once every instance stopped. */
  readonly highWaterMark: number;
  /** Every answered request's numbers, with the instance that answered. */
  readonly issued: readonly { readonly numbers: readonly number[]; readonly instance: number | undefined }[];
  /** Attempts whose outcome is unknown (no answer, or a 5xx): the numbers each asked for. */
  readonly unknownCounts: readonly number[];
  readonly lives: readonly SequenceLife[];
}

function issuedTwice(facts: SequenceFacts): { violations: string[]; seen: Set<number>; count: number } {
  const seen = new Map<number, number>();
  let count = 0;
  const violations: string[] = [];
  for (const answer of facts.issued)
    for (const n of answer.numbers) {
      count++;
      seen.set(n, (seen.get(n) ?? 0) + 1);
      if (n < facts.start || n >= facts.highWaterMark)
        violations.push(`${n} was issued (by instance ${answer.instance ?? '?'}) outside [${facts.start}, ${facts.highWaterMark})`);
    }
  for (const [n, c] of seen) if (c > 1) violations.push(`${n} was issued ${c} times`);
  return { violations, seen: new Set(seen.keys()), count };
}

export function checkSequences(facts: SequenceFacts): CheckReport {
  const issued = issuedTwice(facts);
  const owner = new Map<number, string>();
  const reservedTwice: string[] = [];
  const gapViolations: string[] = [];
  const counts = { killedTails: 0, stoppedTails: 0, holes: 0 };
  for (const life of facts.lives) {
    const numbers: number[] = [];
    for (const b of life.blocks)
      for (let n = b.lo; n < b.hi; n++) {
        const other = owner.get(n);
        if (other !== undefined) reservedTwice.push(`${n} was reserved by ${other} and by ${life.name}`);
        owner.set(n, life.name);
        numbers.push(n);
      }
    let last = -1;
    for (const [i, n] of numbers.entries()) if (issued.seen.has(n)) last = i;
    const holes = numbers.slice(0, last + 1).filter((n) => !issued.seen.has(n));
    const tail = numbers.length - 1 - last;
    counts.holes += holes.length;
    if (life.how === 'kill') counts.killedTails += tail;
    else counts.stoppedTails += tail;
    if (life.how !== 'kill' && tail > 0 && life.tailWasTopmost)
      gapViolations.push(`${life.name} stopped without giving back its ${tail} unused numbers, though nobody had reserved above them`);
  }
  for (let n = facts.start; n < facts.highWaterMark; n++)
    if (!owner.has(n)) gapViolations.push(`${n} lies below the high-water mark in no instance's block`);
  const budget = facts.unknownCounts.reduce((a, b) => a + b, 0);
  if (counts.holes > budget)
    gapViolations.push(
      `${counts.holes} numbers were skipped inside instances' blocks, more than the ${budget} that attempts without an answer could have taken`,
    );
  return {
    capability: 'sequences',
    invariants: [
      invariant('no number issued twice', capped([...issued.violations, ...reservedTwice]), {
        numbers: issued.count,
        requests: facts.issued.length,
        highWaterMark: facts.highWaterMark,
      }),
      invariant('gaps only from dead and stopped instances and unanswered requests, counted', capped(gapViolations), {
        gaps: counts.killedTails + counts.stoppedTails + counts.holes,
        'tails of killed instances': counts.killedTails,
        'tails of stopped instances (another had reserved above)': counts.stoppedTails,
        'taken by unanswered attempts': counts.holes,
        'unanswered attempts could take': budget,
      }),
    ],
  };
}
