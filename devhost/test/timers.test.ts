import { BlobServiceClient } from '@azure/storage-blob';

import { VirtualClock } from '../clock';
import type { RunningHost } from '../host';
import { categoryThreshold } from '../app/logLevels';
import { parseSchedule } from '../triggers/schedule';
import { startFixture, storageConnection, uniqueName } from './support';

interface TimerInput {
  schedule: { adjustForDST: boolean };
  scheduleStatus: { last: string | null; next: string | null; lastUpdated: string | null };
  isPastDue: boolean;
}
type Runs = Record<'every5s' | 'interval' | 'startup' | 'monitored', TimerInput[]>;

const at = (iso: string): number => Date.parse(iso);

describe('schedule evaluation', () => {
  test('six-field NCRONTAB, with day-of-month AND day-of-week', () => {
    const fridayThe13th = parseSchedule('0 0 0 13 * 5');
    expect(new Date(fridayThe13th.next(at('2026-01-01T00:00:00Z')) ?? 0).toISOString()).toBe('2026-02-13T00:00:00.000Z');
    const every5s = parseSchedule('*/5 * * * * *');
    expect(every5s.next(at('2026-01-01T00:00:03Z'))).toBe(at('2026-01-01T00:00:05Z'));
    expect(every5s.next(at('2026-01-01T00:00:05Z'))).toBe(at('2026-01-01T00:00:10Z'));
    expect(parseSchedule('0 */15 * * * *').minIntervalMs).toBe(15 * 60_000);
  });

  test('five fields, TimeSpans and time zones', () => {
    expect(parseSchedule('*/15 * * * *').next(at('2026-01-01T00:01:00Z'))).toBe(at('2026-01-01T00:15:00Z'));
    expect(parseSchedule('00:30:00').next(at('2026-01-01T00:01:00Z'))).toBe(at('2026-01-01T00:31:00Z'));
    expect(parseSchedule('1.00:00:00').next(0)).toBe(86_400_000);
    expect(parseSchedule('0 0 9 * * *', 'Europe/Paris').next(at('2026-01-01T00:00:00Z'))).toBe(at('2026-01-01T08:00:00Z'));
    expect(parseSchedule('0 0 9 * * *').next(at('2026-01-01T00:00:00Z'))).toBe(at('2026-01-01T09:00:00Z'));
  });

  test('bad schedules fail clearly', () => {
    expect(() => parseSchedule('every minute')).toThrow(expect.objectContaining({ name: 'DevhostError', code: 'ScheduleInvalid' }));
    expect(() => parseSchedule('0 0 25 * * *')).toThrow(/not a valid NCRONTAB/);
    expect(() => parseSchedule('00:00:00')).toThrow(/positive/);
  });
});

describe('timer triggers on the virtual clock', () => {
  const start = at('2026-03-01T00:00:00Z');
  const hostId = uniqueName('timers');
  const clock = new VirtualClock(start);
  let host: RunningHost;
  const runs = async (): Promise<Runs> => (await (await fetch(`${host.baseUrl}/api/runs`)).json()) as Runs;

  beforeAll(async () => {
    // A monitored timer whose last recorded next occurrence passed while the host was down.
    const status = { Last: '2026-02-28T23:45:00.000Z', Next: '2026-02-28T23:50:00.000Z', LastUpdated: '2026-02-28T23:45:00.000Z' };
    const blob = BlobServiceClient.fromConnectionString(storageConnection())
      .getContainerClient('azure-webjobs-hosts')
      .getBlockBlobClient(`timers/${hostId}/Host.Functions.monitored/status`);
    await BlobServiceClient.fromConnectionString(storageConnection()).getContainerClient('azure-webjobs-hosts').createIfNotExists();
    await blob.upload(JSON.stringify(status), JSON.stringify(status).length);
    host = await startFixture('timers', { clock, env: { FAST_SCHEDULE: '*/5 * * * * *', AzureFunctionsWebHost__hostid: hostId } });
    await host.settle();
  });
  afterAll(async () => {
    await host.stop();
  });

  test('runOnStartup runs once at start; a monitored timer that was due while down runs at once with isPastDue', async () => {
    const r = await runs();
    expect(r.startup).toHaveLength(1);
    expect(r.startup[0]?.isPastDue).toBe(false);
    expect(r.monitored).toHaveLength(1);
    expect(r.monitored[0]?.isPastDue).toBe(true);
    expect(r.monitored[0]?.scheduleStatus.last).toBe('2026-02-28T23:45:00.000Z');
  });

  test('advancing the clock fires each occurrence at its time, with schedule status (%Setting% schedule, TimeSpan)', async () => {
    await host.advanceClockTo(start + 60_000);
    const r = await runs();
    expect(r.every5s).toHaveLength(12);
    expect(r.every5s.every((t) => !t.isPastDue)).toBe(true);
    expect(r.every5s[0]?.scheduleStatus.next).toBe('2026-03-01T00:00:10.000Z');
    expect(r.every5s[1]?.scheduleStatus.last).toBe('2026-03-01T00:00:05.000Z');
    expect(r.every5s[11]?.scheduleStatus.next).toBe('2026-03-01T00:01:05.000Z');
    expect(r.interval).toHaveLength(2);
    expect(r.startup).toHaveLength(1);
    expect(clock.now()).toBe(start + 60_000);
  });

  test('the clock admin endpoint moves time in steps; the admin API runs a timer now', async () => {
    const before = (await runs()).every5s.length;
    const headers = { 'x-functions-key': host.masterKey };
    const res = await fetch(`${host.baseUrl}/admin/devhost/clock`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ advanceMs: 10_000 }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ now: '2026-03-01T00:01:10.000Z', virtual: true, steps: 2 });
    expect((await runs()).every5s).toHaveLength(before + 2);
    const bad = await fetch(`${host.baseUrl}/admin/devhost/clock`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ to: '2020-01-01T00:00:00Z' }),
    });
    expect(bad.status).toBe(400);
    expect((await fetch(`${host.baseUrl}/admin/functions/interval`, { method: 'POST', headers, body: '{}' })).status).toBe(202);
    await host.settle();
    expect((await runs()).interval).toHaveLength(3);
  });
});

describe('where the virtual clock starts', () => {
  test('DEVHOST_VIRTUAL_CLOCK_START sets it (a restart "later" without waiting); a value that is no time refuses to start', async () => {
    const host = await startFixture('basic', {
      env: { DEVHOST_VIRTUAL_CLOCK: 'true', DEVHOST_VIRTUAL_CLOCK_START: '2031-05-04T03:02:01.000Z' },
    });
    try {
      const res = await fetch(`${host.baseUrl}/admin/devhost/clock`, { headers: { 'x-functions-key': host.masterKey } });
      expect(await res.json()).toEqual({ now: '2031-05-04T03:02:01.000Z', virtual: true });
    } finally {
      await host.stop();
    }
    await expect(
      startFixture('basic', { env: { DEVHOST_VIRTUAL_CLOCK: 'true', DEVHOST_VIRTUAL_CLOCK_START: 'next tuesday' } }),
    ).rejects.toThrow(/DEVHOST_VIRTUAL_CLOCK_START is not an ISO time: next tuesday/);
  });
});

describe("a timer's own lines follow host.json's logging.logLevel for Function.<name>, as on the real host", () => {
  test('Function.every5s at Warning: its idle runs write no line, the other timers still do (before: a line every run)', async () => {
    const start = at('2026-04-01T00:00:00Z');
    const clock = new VirtualClock(start);
    const lines: string[] = [];
    const host = await startFixture('timers', {
      clock,
      log: (_level, message) => void lines.push(message),
      env: {
        FAST_SCHEDULE: '*/5 * * * * *',
        AzureFunctionsWebHost__hostid: uniqueName('timerlogs'),
        // host.json's logging.logLevel, through the host's own override syntax.
        'AzureFunctionsJobHost__logging__logLevel__Function.every5s': 'Warning',
      },
    });
    try {
      await host.settle();
      await host.advanceClockTo(start + 60_000);
      const runs = (await (await fetch(`${host.baseUrl}/api/runs`)).json()) as Runs;
      expect(runs.every5s.length).toBeGreaterThanOrEqual(12);
      expect(lines.filter((l) => l.includes("'Functions.every5s'"))).toEqual([]);
      expect(lines.filter((l) => l.includes("Executed 'Functions.interval' (Succeeded")).length).toBeGreaterThanOrEqual(2);
    } finally {
      await host.stop();
    }
  });
});

describe('categoryThreshold', () => {
  test('the most specific entry naming the category or a dot-separated prefix of it wins, then default', () => {
    const json = {
      logging: {
        logLevel: { default: 'Warning', Function: 'Information', 'Function.jobsPush': 'Warning', 'Function.jobsPush.User': 'Information' },
      },
    };
    expect(categoryThreshold(json, 'Function.jobsPush')).toBe('warn');
    expect(categoryThreshold(json, 'Function.jobsPush.User')).toBe('info');
    expect(categoryThreshold(json, 'Function.jobsPushed')).toBe('info');
    expect(categoryThreshold(json, 'Host.Results')).toBe('warn');
    expect(categoryThreshold({}, 'Function.x')).toBe('info');
  });
});
