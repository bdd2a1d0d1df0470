import { dueFires, nextFireAfter, type Timing } from '../../../shared/schedules/timing';

const ny = (cron: string): Timing => ({ kind: 'cron', cron, timeZone: 'America/New_York' });
const iso = (d: Date | undefined): string | undefined => d?.toISOString();

function fires(timing: Timing, from: string, n: number): string[] {
  const out: string[] = [];
  let at = new Date(from);
  for (let i = 0; i < n; i++) {
    const next = nextFireAfter(timing, at);
    if (next === undefined) break;
    out.push(next.toISOString());
    at = next;
  }
  return out;
}

describe('next fire time', () => {
  it('fires a one-off once, strictly after the reference', () => {
    const once: Timing = { kind: 'once', at: '2027-01-15T09:00:00.000Z' };
    expect(iso(nextFireAfter(once, new Date('2027-01-15T08:59:59.999Z')))).toBe('2027-01-15T09:00:00.000Z');
    expect(nextFireAfter(once, new Date('2027-01-15T09:00:00.000Z'))).toBeUndefined();
  });

  it('reads the cron in its zone (09:00 New York is 14:00Z in winter, 13:00Z in summer)', () => {
    expect(fires(ny('0 0 9 * * *'), '2027-01-10T00:00:00Z', 1)).toEqual(['2027-01-10T14:00:00.000Z']);
    expect(fires(ny('0 0 9 * * *'), '2027-07-10T00:00:00Z', 1)).toEqual(['2027-07-10T13:00:00.000Z']);
  });

  it('spring forward: a fixed time inside the gap fires once at the first instant after it (03:00 EDT)', () => {
    // 2027-03-14 02:00 EST does not exist in New York: clocks jump to 03:00 EDT.
    expect(fires(ny('0 30 2 * * *'), '2027-03-12T12:00:00Z', 4)).toEqual([
      '2027-03-13T07:30:00.000Z', // 02:30 EST
      '2027-03-14T07:00:00.000Z', // 03:00 EDT, the first valid instant after the gap
      '2027-03-15T06:30:00.000Z', // 02:30 EDT
      '2027-03-16T06:30:00.000Z',
    ]);
  });

  it('spring forward: a fixed time outside the gap keeps its local time across the change', () => {
    expect(fires(ny('0 0 9 * * *'), '2027-03-12T12:00:00Z', 4)).toEqual([
      '2027-03-12T14:00:00.000Z',
      '2027-03-13T14:00:00.000Z',
      '2027-03-14T13:00:00.000Z',
      '2027-03-15T13:00:00.000Z',
    ]);
  });

  it('fall back: a fixed time that occurs twice fires once, at the first (daylight) occurrence', () => {
    // 2027-11-07 01:30 happens at 05:30Z (EDT) and again at 06:30Z (EST).
    expect(fires(ny('0 30 1 * * *'), '2027-11-06T12:00:00Z', 3)).toEqual([
      '2027-11-07T05:30:00.000Z',
      '2027-11-08T06:30:00.000Z',
      '2027-11-09T06:30:00.000Z',
    ]);
    // A list of times is fixed-time too.
    expect(fires(ny('0 30 1,13 * * *'), '2027-11-06T12:00:00Z', 3)).toEqual([
      '2027-11-06T17:30:00.000Z',
      '2027-11-07T05:30:00.000Z',
      '2027-11-07T18:30:00.000Z',
    ]);
  });

  it('interval crons follow elapsed time: they skip the gap and fire in both copies of the repeated hour', () => {
    expect(fires(ny('0 */30 * * * *'), '2027-03-14T06:00:00Z', 4)).toEqual([
      '2027-03-14T06:30:00.000Z', // 01:30 EST
      '2027-03-14T07:00:00.000Z', // 03:00 EDT (02:00 and 02:30 do not exist)
      '2027-03-14T07:30:00.000Z',
      '2027-03-14T08:00:00.000Z',
    ]);
    expect(fires(ny('0 */30 * * * *'), '2027-11-07T05:00:00Z', 4)).toEqual([
      '2027-11-07T05:30:00.000Z', // 01:30 EDT
      '2027-11-07T06:00:00.000Z', // 01:00 EST
      '2027-11-07T06:30:00.000Z', // 01:30 EST
      '2027-11-07T07:00:00.000Z',
    ]);
  });

  it('has no next fire for a cron that can never match', () => {
    expect(nextFireAfter({ kind: 'cron', cron: '0 0 0 30 2 *', timeZone: 'UTC' }, new Date('2027-01-01T00:00:00Z'))).toBeUndefined();
  });
});

describe('fires due in a window', () => {
  const everySecond: Timing = { kind: 'cron', cron: '* * * * * *', timeZone: 'UTC' };

  it('lists the newest fires oldest first and counts them all', () => {
    const due = dueFires(everySecond, new Date('2027-01-01T00:00:00Z'), new Date('2027-01-01T00:00:10Z'), 3);
    expect(due.count).toBe(10);
    expect(due.latest.map((d) => d.toISOString())).toEqual([
      '2027-01-01T00:00:08.000Z',
      '2027-01-01T00:00:09.000Z',
      '2027-01-01T00:00:10.000Z',
    ]);
  });

  it('caps the count for huge backlogs and still finds the newest fires', () => {
    const due = dueFires(everySecond, new Date('2027-01-01T00:00:00Z'), new Date('2027-01-08T00:00:00Z'), 2, 500);
    expect(due.count).toBe(500);
    expect(due.latest.map((d) => d.toISOString())).toEqual(['2027-01-07T23:59:59.000Z', '2027-01-08T00:00:00.000Z']);
  });

  it('finds nothing when nothing is due, and a one-off only inside the window', () => {
    expect(dueFires(everySecond, new Date('2027-01-01T00:00:00Z'), new Date('2027-01-01T00:00:00.500Z'), 1).count).toBe(0);
    const once: Timing = { kind: 'once', at: '2027-01-01T00:00:05.000Z' };
    expect(dueFires(once, new Date(0), new Date('2027-01-01T00:00:04Z'), 1).count).toBe(0);
    expect(dueFires(once, new Date(0), new Date('2027-01-01T00:00:05Z'), 1).count).toBe(1);
    expect(dueFires(once, new Date('2027-01-01T00:00:05Z'), new Date('2027-01-02T00:00:00Z'), 1).count).toBe(0);
  });
});
