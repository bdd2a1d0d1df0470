/**
 * The cron floor for function-level callers (TALLYHO_SCHEDULES_MIN_CRON_INTERVAL_SECONDS): a cron
 * whose fires ever come closer than the floor is a 400 naming `body.cron` for them, and admins are
 * not held to it.
 */
import type { EffectRules } from '../../../shared/effects/admission';
import { parseAllowList } from '../../../shared/effects/webhook/allowList';
import { isAppError } from '../../../shared/errors';
import { admit } from '../../../shared/schedules/admission';
import { createScheduleBody, definitionOf } from '../../../shared/schedules/definition';
import { structuralGapSeconds } from '../../../shared/schedules/cronStructure';
import { shortestGap } from '../../../shared/schedules/timing';

const rules: EffectRules = {
  queues: { allowed: ['app-*'], jobsQueuePrefix: 'jobs-work' },
  serviceBusEntities: ['app-*'],
  serviceBusConfigured: false,
  webhook: { allowed: parseAllowList([]), allowPrivateAddresses: false },
  gatesAvailable: true,
  jobs: { check: () => Promise.resolve() },
};
const now = new Date('2026-03-01T12:00:00Z');

function definition(cron: string, timeZone?: string) {
  return definitionOf(
    createScheduleBody.parse({
      cron,
      ...(timeZone === undefined ? {} : { timeZone }),
      target: { type: 'queueMessage', queue: 'app-x', message: 1 },
    }),
  );
}

async function issuesOf(cron: string, floorSeconds: number | undefined, timeZone?: string): Promise<unknown> {
  try {
    await admit(definition(cron, timeZone), rules, now, floorSeconds);
    return [];
  } catch (err) {
    if (!isAppError(err)) throw err;
    return err.issues;
  }
}

describe('the cron floor for function-level callers', () => {
  test.each([
    ['* * * * * *', 1],
    ['0,30 * * * * *', 30],
    ['0 * * * * *', 60],
    ['0 */5 * * * *', 300],
    ['0 0 9 * * MON-FRI', 86_400],
  ])('%s fires at least %i s apart', (cron, seconds) => {
    expect(shortestGap(definition(cron).timing as { kind: 'cron'; cron: string; timeZone: string }, now, 0, 3000)).toBe(seconds * 1000);
  });

  test.each([
    ['* * * 29 2 *', 1],
    ['* * * 29 2 MON', 1],
    ['0,59 * * 29 2 *', 1],
    ['0,30 * * 29 2 *', 30],
    ['0 0,1 * 29 2 *', 60],
    ['0 59 23,0 29 2 *', 3600],
    ['0 59,0 23,0 29 2 *', 60],
  ])(
    '%s fires %i s apart on the days it fires, however far ahead they are (the fields decide, not the calendar)',
    async (cron, seconds) => {
      expect(structuralGapSeconds(cron)).toBe(seconds);
      // Refused below the floor from any date, including one whose next 29 February is years away.
      for (const from of [now, new Date('2029-03-01T00:00:00Z')]) {
        await expect(admit(definition(cron), rules, from, seconds + 1)).rejects.toMatchObject({ issues: [{ path: 'body.cron' }] });
      }
    },
  );

  test('fields fixed to one value each leave the gap to the calendar', () => {
    expect(structuralGapSeconds('0 0 9 * * MON-FRI')).toBeUndefined();
    expect(structuralGapSeconds('0 0 L * * *')).toBeUndefined();
  });

  test('every second is refused below the floor, naming the field and the setting', async () => {
    expect(await issuesOf('* * * * * *', 60)).toEqual([
      {
        path: 'body.cron',
        message:
          'Fires 1 s apart at times; a schedule created with a function key may fire at most every 60 s (TALLYHO_SCHEDULES_MIN_CRON_INTERVAL_SECONDS)',
      },
    ]);
  });

  test('a cron at the floor passes; admins (no floor) may fire every second', async () => {
    expect(await issuesOf('0 * * * * *', 60)).toEqual([]);
    expect(await issuesOf('* * * * * *', undefined)).toEqual([]);
  });

  test('a burst hidden in one day of the year is found', async () => {
    // Every second of one minute, once a year: the first fires after `now` are a year away, and still seen.
    expect(await issuesOf('* 0 0 1 1 *', 60)).toMatchObject([{ path: 'body.cron' }]);
  });

  test('fires brought close by a month end are found', async () => {
    // 23:59 on the 31st and 00:00 on the 1st are a minute apart, once a month of 31 days.
    expect(await issuesOf('0 0,59 0,23 1,31 * *', 61)).toMatchObject([
      { path: 'body.cron', message: expect.stringContaining('Fires 60 s apart') },
    ]);
    expect(await issuesOf('0 0,59 0,23 1,31 * *', 60)).toEqual([]);
  });
});
