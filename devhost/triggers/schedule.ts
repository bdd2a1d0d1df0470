/**
 * Timer schedules as the Functions host reads them: NCRONTAB (`{second} {minute} {hour} {day}
 * {month} {day-of-week}`, five fields accepted too) evaluated by croner with NCRONTAB's AND rule for
 * day-of-month and day-of-week, or a TimeSpan (`hh:mm:ss`, `d.hh:mm:ss`) meaning "every interval".
 * Cron schedules run in UTC unless `WEBSITE_TIME_ZONE` (or `TZ`) names an IANA zone.
 */
import { Cron } from 'croner';

import { parseTimeSpanMs } from '../app/hostJson';
import { DevhostError } from '../errors';

export interface Schedule {
  readonly expression: string;
  readonly kind: 'cron' | 'interval';
  /** The first occurrence strictly after `afterMs`. */
  next(afterMs: number): number | undefined;
  /** Shortest gap between occurrences (decides whether the schedule is monitored by default). */
  readonly minIntervalMs: number;
}

export function validateTimeZone(zone: string): string {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone }).format(0);
    return zone;
  } catch {
    throw new DevhostError(
      'ScheduleInvalid',
      `Time zone "${zone}" (WEBSITE_TIME_ZONE/TZ) is not an IANA time zone name such as "Europe/Paris"`,
    );
  }
}

export function parseSchedule(expression: string, timeZone = 'Etc/UTC'): Schedule {
  const text = expression.trim();
  const intervalMs = /^[\d.:]+$/.test(text) ? parseTimeSpanMs(text) : undefined;
  if (intervalMs !== undefined) {
    if (intervalMs <= 0) throw new DevhostError('ScheduleInvalid', `Timer schedule "${expression}" must be a positive interval`);
    return { expression: text, kind: 'interval', next: (after) => after + intervalMs, minIntervalMs: intervalMs };
  }
  const fields = text.split(/\s+/).length;
  if (fields !== 5 && fields !== 6) {
    throw new DevhostError(
      'ScheduleInvalid',
      `Timer schedule "${expression}" is neither an NCRONTAB expression (6 fields: second minute hour day month day-of-week) nor a TimeSpan (hh:mm:ss)`,
    );
  }
  let cron: Cron;
  try {
    cron = new Cron(text, { timezone: timeZone, domAndDow: true, mode: fields === 6 ? '6-part' : '5-part', paused: true });
  } catch (err) {
    throw new DevhostError(
      'ScheduleInvalid',
      `Timer schedule "${expression}" is not a valid NCRONTAB expression: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const next = (after: number): number | undefined => cron.nextRun(new Date(after))?.getTime();
  // Estimate the tightest gap from a few consecutive occurrences (enough for the monitor default).
  let minIntervalMs = Infinity;
  let t = next(Date.UTC(2025, 0, 1));
  for (let i = 0; i < 5 && t !== undefined; i++) {
    const u = next(t);
    if (u === undefined) break;
    minIntervalMs = Math.min(minIntervalMs, u - t);
    t = u;
  }
  return { expression: text, kind: 'cron', next, minIntervalMs };
}
