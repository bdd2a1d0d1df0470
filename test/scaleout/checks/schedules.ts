/**
 * Schedules across instances (docs/schedules.md): each occurrence fires once — never once per
 * instance. A one-off fires exactly once (its row says completed with one run, and its queue
 * message arrived); a recurrence runs each due time at most once. Delivery is at least once, so a
 * second copy of a message is accepted only when an instance was killed or stopped between the
 * fire and the copy (an activity retried after the crash); anything else is a double fire.
 */
import { capped, type CheckReport, invariant } from '../workload';

export interface ScheduleRun {
  readonly runId?: string;
  readonly at: string;
  readonly kind: string;
  readonly outcome: string;
  readonly count?: number;
}

export interface ScheduleFacts {
  readonly id: string;
  readonly kind: 'once' | 'cron';
  /** The final view (undefined: never read). */
  readonly state: string | undefined;
  readonly runCount: number;
  readonly runs: readonly ScheduleRun[];
  /** Insertion times of the queue messages its target sent. */
  readonly messages: readonly number[];
  /** When a one-off was due. */
  readonly dueAt?: number;
}

/** Kills and stops: (instance, time). */
export type Disruption = { readonly at: number };

const fired = (r: ScheduleRun): boolean =>
  (r.kind === 'scheduled' || r.kind === 'catchUp') && r.outcome !== 'skipped' && r.outcome !== 'missed';

function copiesExplained(messages: readonly number[], from: number, disruptions: readonly Disruption[]): boolean {
  const last = Math.max(...messages);
  return disruptions.some((d) => d.at >= from - 1000 && d.at <= last);
}

export function checkSchedules(schedules: readonly ScheduleFacts[], disruptions: readonly Disruption[]): CheckReport {
  const once: string[] = [];
  const cron: string[] = [];
  let redelivered = 0;
  let occurrences = 0;
  for (const s of schedules) {
    const runs = s.runs.filter(fired);
    if (s.kind === 'once') {
      occurrences++;
      if (s.state !== 'completed' || s.runCount !== 1 || runs.length !== 1)
        once.push(`${s.id}: state ${s.state ?? 'unread'}, runCount ${s.runCount}, ${runs.length} fires recorded`);
      if (s.messages.length === 0) once.push(`${s.id}: fired, but its message never arrived`);
      if (s.messages.length > 1) {
        if (copiesExplained(s.messages, s.dueAt ?? 0, disruptions)) redelivered += s.messages.length - 1;
        else once.push(`${s.id}: ${s.messages.length} messages with no crash to explain the copies`);
      }
      continue;
    }
    const ats = runs.map((r) => r.at);
    occurrences += ats.length;
    for (const [i, at] of ats.entries()) if (ats.indexOf(at) !== i) cron.push(`${s.id}: the occurrence due ${at} ran twice`);
    const succeeded = runs.filter((r) => r.outcome === 'succeeded').length;
    if (s.messages.length < succeeded) cron.push(`${s.id}: ${succeeded} runs succeeded, ${s.messages.length} messages arrived`);
    if (s.messages.length > runs.length) {
      if (copiesExplained(s.messages, 0, disruptions)) redelivered += s.messages.length - runs.length;
      else cron.push(`${s.id}: ${s.messages.length} messages for ${runs.length} fires, no crash to explain the copies`);
    }
  }
  return {
    capability: 'schedules',
    invariants: [
      invariant('each occurrence fires once, never once per instance', capped([...once, ...cron]), {
        schedules: schedules.length,
        occurrences,
        redeliveredAfterACrash: redelivered,
      }),
    ],
  };
}
