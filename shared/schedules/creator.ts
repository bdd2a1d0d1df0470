/**
 * Who created a schedule. The Functions host tells a handler nothing about the key a caller used, so
 * the record is what the caller says (`by`, free text) plus the level of the route it came through,
 * which the host did enforce: `admin` means the caller held the master key. It is stored with the
 * schedule, shown in its view, and named in what its runs do (a gate release's audit note).
 */
import * as z from 'zod';

import type { AuthLevel } from '../http/authorization';

export const creatorSchema = z
  .object({
    by: z.string().meta({ description: 'Who the creator said they are (`by` in the create body; "unnamed" when omitted).' }),
    level: z
      .enum(['function', 'admin'])
      .meta({ description: 'The key level of the route it was created through, as the host enforced it.' }),
    owner: z
      .string()
      .optional()
      .meta({ description: 'The caller identity that owns it (absent on schedules created before owners were recorded: admins only).' }),
  })
  .meta({ id: 'ScheduleCreator' });

export type Creator = z.output<typeof creatorSchema>;

export const creatorName = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[^\r\n]*$/, 'One line')
  .meta({ description: 'Who is creating the schedule, for the record (free text; the key level is recorded beside it).' });

/** `owner`: the Caller id of the creator (shared/ownership.ts): the schedule, and the jobs its runs submit, are theirs. */
export function creatorOf(by: string | undefined, level: Exclude<AuthLevel, 'anonymous'>, owner: string): Creator {
  return { by: by ?? 'unnamed', level, owner };
}

/** How a run names its schedule's creator, e.g. in a gate's audit note. */
export function describeCreator(creator: Creator | undefined): string {
  return creator === undefined ? 'creator not recorded' : `created by "${creator.by}" with the ${creator.level} key`;
}
