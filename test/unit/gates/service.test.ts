/** A scheduled release's time is checked before anything is read or written. */
import { AppError } from '../../../shared/errors';
import { checkReleaseAt } from '../../../shared/gates/service';

describe('checkReleaseAt', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  test('normalises a future time to UTC and accepts none', () => {
    expect(checkReleaseAt('2026-01-01T02:00:00+01:00', now)).toBe('2026-01-01T01:00:00.000Z');
    expect(checkReleaseAt(undefined, now)).toBeNull();
  });
  test.each([['2025-12-31T23:59:59Z'], ['2026-01-01T00:00:00Z'], ['2027-01-03T00:00:00Z']])(
    'refuses %s with a 400 naming body.releaseAt',
    (at) => {
      try {
        checkReleaseAt(at, now);
        throw new Error('accepted');
      } catch (err) {
        expect(err).toBeInstanceOf(AppError);
        expect(err).toMatchObject({ code: 'ValidationFailed', issues: [{ path: 'body.releaseAt' }] });
      }
    },
  );
});
