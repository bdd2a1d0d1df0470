/** What a failed webhook call tells callers and operators (shared/webhookFailure.ts), for schedule runs and the jobs' pusher alike. */
import { callerReason, failedAnswer, storedReason, unreachable, unusableAnswer } from '../../shared/webhookFailure';

test('a caller reads the status or a fixed phrase of what admins read whole', () => {
  const page = failedAnswer(502, 'upstream db.internal:5432 refused');
  expect(page.reason).toBe('HTTP 502');
  expect(callerReason(storedReason(page))).toBe('HTTP 502');
  const dns = unreachable(new Error('getaddrinfo ENOTFOUND db.internal\n    at GetAddrInfoReqWrap'));
  expect(storedReason(dns)).toBe('The endpoint could not be reached: getaddrinfo ENOTFOUND db.internal');
  expect(callerReason(storedReason(dns))).toBe('The endpoint could not be reached');
  expect(callerReason(storedReason(unusableAnswer(200, 'the answer is not JSON', '<html>')))).toBe('HTTP 200');
  // Reasons of other kinds (the app's own refusals) pass unchanged.
  expect(callerReason('refused: evil.example is not allowed')).toBe('refused: evil.example is not allowed');
});
