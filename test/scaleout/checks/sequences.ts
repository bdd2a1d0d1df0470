/**
 * Sequences across instances (docs/sequences.md): no number is issued twice, and every number
 * below the final high-water mark that nobody was given is accounted for — in a block of an
 * instance that was killed (SIGKILL: its blocks die with it), in a block of an instance that
 * stopped gracefully and could not give its tail back (another instance had reserved above it; the
 * devhost logs these as `sequence.gap`, the real host loses what its worker logs while stopping), or
 * taken by a request whose answer never arrived (at most the numbers those requests asked for).
 */
import { capped, type CheckReport, invariant } from '../workload';

export interface NumberRange {
  readonly lo: number;
  /** Exclusive. */
  readonly hi: number;
}

export interface SequenceFacts {
  readonly name: string;
  readonly start: number;
  /** The stored `next` once every instance stopped. */
  readonly highWaterMark: number;
  /** Every answered request's numbers, with the instance that answered. */
  readonly issued: readonly { readonly numbers: readonly number[]; readonly instance: number | undefined }[];
  /** Requests whose outcome is unknown (no answer, or a 502 from a lost instance): the numbers they asked for. */
  readonly unknownCounts: readonly number[];
  /** Blocks reserved by instance lives that ended in a kill. */
  readonly killedBlocks: readonly NumberRange[];
  /** Blocks reserved by instance lives that ended in a graceful stop. */
  readonly stoppedBlocks: readonly NumberRange[];
  /** Ranges instances logged as gaps when they stopped (where the host kept the log). */
  readonly loggedGaps: readonly NumberRange[];
}

const within = (n: number, ranges: readonly NumberRange[]): boolean => ranges.some((r) => n >= r.lo && n < r.hi);

export function checkSequences(facts: SequenceFacts): CheckReport {
  const seen = new Map<number, number>();
  let issuedCount = 0;
  const outOfRange: string[] = [];
  for (const answer of facts.issued)
    for (const n of answer.numbers) {
      issuedCount++;
      seen.set(n, (seen.get(n) ?? 0) + 1);
      if (n < facts.start || n >= facts.highWaterMark)
        outOfRange.push(`${n} was issued (by instance ${answer.instance ?? '?'}) outside [${facts.start}, ${facts.highWaterMark})`);
    }
  const twice = [...seen].filter(([, c]) => c > 1).map(([n, c]) => `${n} was issued ${c} times`);

  let fromKilled = 0;
  let fromStopped = 0;
  let logged = 0;
  const unexplained: number[] = [];
  for (let n = facts.start; n < facts.highWaterMark; n++) {
    if (seen.has(n)) continue;
    if (within(n, facts.loggedGaps)) logged++;
    if (within(n, facts.killedBlocks)) fromKilled++;
    else if (within(n, facts.stoppedBlocks)) fromStopped++;
    else unexplained.push(n);
  }
  const unknownBudget = facts.unknownCounts.reduce((a, b) => a + b, 0);
  const gapViolations =
    unexplained.length > unknownBudget
      ? [
          `${unexplained.length} unused numbers are in no block of an instance that ended, more than the ${unknownBudget} ` +
            `that requests without an answer could have taken; first: ${unexplained.slice(0, 10).join(', ')}`,
        ]
      : [];
  return {
    capability: 'sequences',
    invariants: [
      invariant('no number issued twice', capped([...twice, ...outOfRange]), {
        numbers: issuedCount,
        requests: facts.issued.length,
        highWaterMark: facts.highWaterMark,
      }),
      invariant('gaps only from ended instances and unanswered requests, counted', gapViolations, {
        gaps: fromKilled + fromStopped + unexplained.length,
        inKilledBlocks: fromKilled,
        inStoppedBlocks: fromStopped,
        loggedAsGaps: logged,
        unanswered: unexplained.length,
        unansweredBudget: unknownBudget,
        killedBlocks: facts.killedBlocks.length,
      }),
    ],
  };
}
