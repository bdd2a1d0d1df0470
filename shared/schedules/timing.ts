/**
 * When a schedule fires. Pure and deterministic (no clock reads): every function takes the instant
 * it computes from, so the orchestrator can call it with `context.df.currentUtcDateTime` and get the
 * same answer on every replay.
 *
 * Daylight-saving time, decided once here (croner implements it; the unit tests pin it down):
 * - A cron whose second, minute and hour fields are plain values or lists (`0 30 2 * * *`,
 *   `0 0 9,17 * * *`) is a *fixed-time* schedule. When its local time does not exist that day (spring
 *   forward: 02:30 in America/New_York on the second Sunday of March) it fires once at the first
 *   valid instant after the gap (03:00 local). When its local time occurs twice (fall back: 01:30 on
 *   the first Sunday of November) it fires once, at the first occurrence (daylight time).
 * - A cron with a wildcard or a step in those fields (`0 *\/15 * * * *`) is an *interval* schedule:
 *   it follows elapsed time, so it skips the local times that do not exist and fires at both
 *   occurrences of a repeated hour.
 */
import { Cron } from 'croner';

export type Timing =
  { readonly kind: 'once'; readonly at: string } | { readonly kind: 'cron'; readonly cron: string; readonly timeZone: string };

const cronCache = new Map<string, Cron>();
const maxCached = 1000;

/** A paused croner job (never scheduled: no callback, so no timers). Throws on a bad pattern or zone. */
export function compileCron(pattern: string, timeZone: string): Cron {
  const key = `${timeZone}\u0000${pattern}`;
  let cron = cronCache.get(key);
  if (cron === undefined) {
    cron = new Cron(pattern, { timezone: timeZone, mode: '6-part', fixedTimeRule: 'no-wildcard', paused: true });
    if (cronCache.size >= maxCached) cronCache.clear();
    cronCache.set(key, cron);
  }
  return cron;
}

/** The first fire strictly after `after`, or undefined when there is none (a one-off already past). */
export function nextFireAfter(timing: Timing, after: Date): Date | undefined {
  if (timing.kind === 'once') {
    const at = new Date(timing.at);
    return at.getTime() > after.getTime() ? at : undefined;
  }
  return compileCron(timing.cron, timing.timeZone).nextRun(after) ?? undefined;
}

export interface DueFires {
  /** The latest fires in (after, upTo], oldest first; at most `keep` of them. */
  readonly latest: readonly Date[];
  /** How many fires fell in (after, upTo] in all (counted up to `countCap`, then reported as the cap). */
  readonly count: number;
}

/**
 * The fires that came due in (after, upTo]. A second-granular cron missed over a week of downtime
 * has 604,800 of them, so only the last `keep` are listed and the count stops at `countCap`.
 */
export function dueFires(timing: Timing, after: Date, upTo: Date, keep: number, countCap = 10_000): DueFires {
  if (timing.kind === 'once') {
    const at = new Date(timing.at).getTime();
    const due = at > after.getTime() && at <= upTo.getTime();
    return { latest: due ? [new Date(at)] : [], count: due ? 1 : 0 };
  }
  const cron = compileCron(timing.cron, timing.timeZone);
  const latest: Date[] = [];
  let count = 0;
  let cursor: Date | null = after;
  while (count < countCap) {
    cursor = cron.nextRun(cursor);
    if (cursor === null || cursor.getTime() > upTo.getTime()) return { latest, count };
    count++;
    latest.push(cursor);
    if (latest.length > keep) latest.shift();
  }
  // Too many to walk: the newest ones come from walking backwards from upTo.
  const newest = cron
    .previousRuns(keep + 1, new Date(upTo.getTime() + 1))
    .filter((d) => d.getTime() > after.getTime() && d.getTime() <= upTo.getTime())
    .slice(0, keep)
    .reverse();
  return { latest: newest, count };
}

/**
 * The shortest time between two consecutive fires of a cron, looking at the fires after `from`: up
 * to `maxFires` of them or `horizonMs` ahead, stopping at the first gap below `floorMs` (a cron's
 * fires repeat by minute, hour, day, month and year, so a short gap shows within a year of fires).
 * Undefined when it fires fewer than twice in that window.
 */
export function shortestGap(
  timing: Extract<Timing, { kind: 'cron' }>,
  from: Date,
  floorMs: number,
  maxFires = 3000,
  horizonMs = 400 * 86_400_000,
): number | undefined {
  const cron = compileCron(timing.cron, timing.timeZone);
  const end = from.getTime() + horizonMs;
  let previous = cron.nextRun(from);
  let shortest: number | undefined;
  for (let i = 1; i < maxFires && previous !== null && previous.getTime() <= end; i++) {
    const next = cron.nextRun(previous);
    if (next === null) break;
    const gap = next.getTime() - previous.getTime();
    if (shortest === undefined || gap < shortest) shortest = gap;
    if (gap < floorMs) break;
    previous = next;
  }
  return shortest;
}
