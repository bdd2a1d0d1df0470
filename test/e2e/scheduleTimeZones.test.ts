/**
 * Cron schedules in a time zone across a daylight-saving change, on the devhost's virtual clock: the
 * local times hold, and the time the change skips fires once, at 03:00. (Shared helpers:
 * support/schedules.ts.)
 */
import { describeDevhost, type E2eHost, startE2eHost } from './support/harness';
import { api, body, queueTexts, quietTimers, ran, until } from './support/schedules';
import { unique } from './support/names';

describeDevhost('schedules across a daylight-saving change', () => {
  let host: E2eHost;
  let s: ReturnType<typeof api>;

  beforeAll(async () => {
    // A daily recheck instead of an hourly one: fewer clock steps over the four simulated days.
    host = await startE2eHost({ virtualClock: true, env: { ...quietTimers, TALLYHO_SCHEDULES_RECHECK_SECONDS: '86400' } });
    s = api(host);
  });
  afterAll(async () => {
    await host.dispose();
  });

  test('America/New_York in March: fires at the right local times, the gap time once at 03:00', async () => {
    await s.advanceTo('2027-03-12T12:00:00Z');
    const queue = unique('app-dst');
    const gap = unique('gap');
    const nine = unique('nine');
    body(
      await s.create({
        id: gap,
        cron: '0 30 2 * * *',
        timeZone: 'America/New_York',
        target: { type: 'queueMessage', queue, message: 'gap' },
      }),
      201,
    );
    body(
      await s.create({
        id: nine,
        cron: '0 0 9 * * *',
        timeZone: 'America/New_York',
        target: { type: 'queueMessage', queue, message: 'nine' },
      }),
      201,
    );
    await until(
      'both started',
      () => s.get(nine),
      (r) => r.body.nextFireAt === '2027-03-12T14:00:00.000Z',
    );
    await s.advanceTo('2027-03-16T12:00:00Z');
    const gapRuns = ran(
      (
        await until(
          'gap runs',
          () => s.get(gap),
          (r) => ran(r.body).length === 4,
        )
      ).body,
    );
    expect(gapRuns.map((r) => `${r.at} ${r.outcome}`)).toEqual([
      '2027-03-13T07:30:00.000Z succeeded', // 02:30 EST
      '2027-03-14T07:00:00.000Z succeeded', // 02:30 does not exist: 03:00 EDT
      '2027-03-15T06:30:00.000Z succeeded', // 02:30 EDT
      '2027-03-16T06:30:00.000Z succeeded',
    ]);
    const nineRuns = ran(
      (
        await until(
          'nine runs',
          () => s.get(nine),
          (r) => ran(r.body).length === 4,
        )
      ).body,
    );
    expect(nineRuns.map((r) => r.at)).toEqual([
      '2027-03-12T14:00:00.000Z', // 09:00 EST
      '2027-03-13T14:00:00.000Z',
      '2027-03-14T13:00:00.000Z', // 09:00 EDT
      '2027-03-15T13:00:00.000Z',
    ]);
    expect((await queueTexts(host, queue)).sort()).toEqual(['gap', 'gap', 'gap', 'gap', 'nine', 'nine', 'nine', 'nine']);
    body(await s.cancel(gap), 200);
    body(await s.cancel(nine), 200);
  });
});
