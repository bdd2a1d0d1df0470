import { type Clock, ManualClock, systemClock } from '../../shared/clock';

/** Time that moves only when told, but whose sleeps (retry back-off) are real. */
export function testClock(start = Date.UTC(2026, 0, 1, 12)): ManualClock & Clock {
  const clock = new ManualClock(start);
  clock.sleep = (ms, signal) => systemClock.sleep(ms, signal);
  return clock;
}
