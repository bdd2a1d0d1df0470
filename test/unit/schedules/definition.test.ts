import { keepRuns } from '../../../shared/schedules/activities';
import { createScheduleBody, definitionKey, definitionOf } from '../../../shared/schedules/definition';
import type { RunRecord } from '../../../shared/schedules/records';
import { sequenceNumberOf } from '../../../shared/schedules/scheduledDelivery';

const target = { type: 'queueMessage', queue: 'out', message: 'hi' };

function issues(body: unknown): string[] {
  const parsed = createScheduleBody.safeParse(body);
  return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
}

describe('schedule definition validation', () => {
  it.each([
    ['a one-off', { at: '2027-01-15T09:00:00+01:00', target }],
    ['a cron in a zone', { cron: '0 */15 9-17 * * MON-FRI', timeZone: 'Europe/Berlin', target }],
    [
      'a cron in UTC by default, with policies',
      { id: 'x.y_z-1', cron: '0 0 * * * *', overlap: 'bufferOne', catchUp: { policy: 'all', limit: 5 }, target },
    ],
    ['a webhook', { at: '2027-01-15T09:00:00Z', target: { type: 'webhook', url: 'https://hooks.example.com/x', payload: { a: [1] } } }],
    [
      'Service Bus scheduled',
      { at: '2027-01-15T09:00:00Z', target: { type: 'serviceBus', entity: 'orders', message: {}, sessionId: 'k', delivery: 'scheduled' } },
    ],
    ['a gate', { cron: '0 0 8 * * *', target: { type: 'gateRelease', gate: 'launch' } }],
  ])('accepts %s', (_name, body) => {
    expect(issues(body)).toEqual([]);
  });

  it.each([
    ['neither at nor cron', { target }, 'at: Give exactly one'],
    ['both at and cron', { at: '2027-01-15T09:00:00Z', cron: '0 0 9 * * *', target }, 'at: Give exactly one'],
    ['a time without offset', { at: '2027-01-15T09:00:00', target }, 'at: '],
    ['a time before 2000', { at: '1999-12-31T23:59:59Z', target }, 'at: Must be between'],
    ['five cron fields', { cron: '0 9 * * *', target }, 'cron: Use six fields'],
    ['seven cron fields', { cron: '0 0 9 * * * 2027', target }, 'cron: Use six fields'],
    ['a bad cron value', { cron: '0 61 * * * *', target }, 'cron: CronPattern'],
    ['letters in the cron', { cron: 'a b c d e f', target }, 'cron: '],
    [
      'an unknown zone',
      { cron: '0 0 9 * * *', timeZone: 'Europe/Atlantis', target },
      'timeZone: "Europe/Atlantis" is not an IANA time zone',
    ],
    ['an offset for a zone', { cron: '0 0 9 * * *', timeZone: 'UTC+2', target }, 'timeZone: '],
    ['a zone with a one-off', { at: '2027-01-15T09:00:00Z', timeZone: 'UTC', target }, 'timeZone: Applies to `cron` only'],
    [
      'a limit without all',
      { cron: '0 0 9 * * *', catchUp: { policy: 'once', limit: 3 }, target },
      'catchUp.limit: Applies to the `all` policy only',
    ],
    ['an unknown overlap', { cron: '0 0 9 * * *', overlap: 'queue', target }, 'overlap: '],
    ['an unknown target', { cron: '0 0 9 * * *', target: { type: 'email', to: 'a@b.c' } }, 'target.type: '],
    ['a bad queue name', { cron: '0 0 9 * * *', target: { ...target, queue: 'Bad_Queue' } }, 'target.queue: '],
    ['extra fields', { cron: '0 0 9 * * *', target, colour: 'blue' }, ': Unrecognized key'],
    ['a bad id', { id: '-x', cron: '0 0 9 * * *', target }, 'id: '],
    [
      'scheduled delivery on a cron',
      { cron: '0 0 9 * * *', target: { type: 'serviceBus', entity: 'q', message: 1, delivery: 'scheduled' } },
      'target.delivery: Scheduled delivery hands one message',
    ],
  ])('refuses %s', (_name, body, expected) => {
    expect(issues(body).some((i) => i.startsWith(expected))).toBe(true);
  });

  it('fills in the defaults and normalises the time and the cron spacing', () => {
    const parsed = createScheduleBody.parse({ at: '2027-01-15T10:00:00+01:00', target, catchUp: 'all' });
    expect(definitionOf(parsed)).toEqual({
      timing: { kind: 'once', at: '2027-01-15T09:00:00.000Z' },
      target,
      overlap: 'skip',
      catchUp: { policy: 'all', limit: 10 },
    });
    const cron = definitionOf(createScheduleBody.parse({ cron: ' 0  0 9 * * * ', target }));
    expect(cron.timing).toEqual({ kind: 'cron', cron: '0 0 9 * * *', timeZone: 'UTC' });
    expect(cron.catchUp).toEqual({ policy: 'once' });
  });

  it('keys definitions by meaning: key order and zone aliases do not matter, content does', () => {
    const key = (body: unknown) => definitionKey(definitionOf(createScheduleBody.parse(body)));
    const a = key({ cron: '0 0 9 * * *', timeZone: 'America/New_York', target: { ...target, message: { a: 1, b: 2 } } });
    expect(
      key({ target: { message: { b: 2, a: 1 }, queue: 'out', type: 'queueMessage' }, timeZone: 'US/Eastern', cron: '0 0 9 * * *' }),
    ).toBe(a);
    expect(key({ cron: '0 0 9 * * *', timeZone: 'America/New_York', target: { ...target, message: { a: 1, b: 3 } } })).not.toBe(a);
    expect(key({ cron: '0 0 9 * * *', timeZone: 'America/Chicago', target: { ...target, message: { a: 1, b: 2 } } })).not.toBe(a);
  });
});

describe('Service Bus sequence numbers', () => {
  it('round-trip exactly as strings, beyond 2^53 and up to 2^63 - 1', () => {
    for (const text of ['0', '9007199254740993', '9223372036854775807', '-1']) expect(sequenceNumberOf(text).toString()).toBe(text);
    expect(Number('9007199254740993').toString()).not.toBe('9007199254740993'); // why strings
  });

  it('refuses what is not a 64-bit integer', () => {
    for (const text of ['', '1.5', '1e3', 'abc', '9223372036854775808', '12345678901234567890'])
      expect(() => sequenceNumberOf(text)).toThrow();
  });
});

describe('run history in the index', () => {
  const run = (n: number, outcome: RunRecord['outcome']): RunRecord => ({ runId: `s#${n}`, at: `t${n}`, kind: 'scheduled', outcome });

  it('keeps the newest records and never drops a run still in progress', () => {
    const runs = [run(1, 'running'), run(2, 'succeeded'), run(3, 'failed'), run(4, 'succeeded'), run(5, 'running')];
    expect(keepRuns(runs, 3).map((r) => r.runId)).toEqual(['s#1', 's#4', 's#5']);
    expect(keepRuns(runs, 10)).toHaveLength(5);
  });
});
