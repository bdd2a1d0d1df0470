/**
 * A webhook processor's failures, on Azurite: every submitter of a job reads its items' reasons, so
 * they carry `HTTP <status>` or a fixed phrase — never what the operator's endpoint answered, nor the
 * resolver's error — and the whole answer goes to the log for operators (shared/webhookFailure.ts,
 * the same piece schedule runs use).
 */
import { declareBody } from '../../../shared/jobs/http/processorSchemas';
import type { PushTransport } from '../../../shared/jobs/processors/pushTransport';
import type { Logger } from '../../../shared/log';
import { jobHarness } from '../../support/jobs';

const secret = 'at Db.connect (db.internal:5432) password=hunter2';

function recordingLogger(): Logger & { readonly lines: { event: string; fields: Record<string, unknown> }[] } {
  const lines: { event: string; fields: Record<string, unknown> }[] = [];
  return { lines, log: (_level, event, fields = {}) => void lines.push({ event, fields }) };
}

async function failuresAfterOnePush(post: PushTransport['post']) {
  const logger = recordingLogger();
  const h = jobHarness({ logger, push: { urlIssue: () => undefined, post } });
  await h.jobs.processors.declare(
    'hook',
    declareBody.parse({
      type: 'webhook',
      url: 'https://hooks.example.com/batch',
      maxAttempts: 1,
      retry: { delaySeconds: 0, multiplier: 1, maxDelaySeconds: 0 },
    }),
  );
  const { job } = await h.jobs.submissions.submit({ processor: 'hook', items: [{ id: 'a' }, { id: 'b' }] }, undefined);
  await h.jobs.upkeep.push(30_000);
  const failures = await h.jobs.reads.results(job.id, 'failures', undefined, { maxPageSize: 10 });
  return { reasons: failures.items.map((r) => r.reason), logged: logger.lines.filter((l) => l.event === 'jobs.push_failed') };
}

test("an endpoint's error page reaches submitters as its status only, and operators in the log", async () => {
  const { reasons, logged } = await failuresAfterOnePush(() => Promise.resolve({ status: 500, body: secret, retryAfter: undefined }));
  expect(reasons).toEqual(['HTTP 500 (gave up after 1 attempts)', 'HTTP 500 (gave up after 1 attempts)']);
  expect(JSON.stringify(logged)).toContain('hunter2');
});

test('a resolver error reaches submitters as a fixed phrase, and operators in the log', async () => {
  const { reasons, logged } = await failuresAfterOnePush(() => Promise.reject(new Error('getaddrinfo ENOTFOUND db.internal')));
  expect(reasons).toEqual(Array(2).fill('The endpoint could not be reached (gave up after 1 attempts)'));
  expect(JSON.stringify(logged)).toContain('ENOTFOUND db.internal');
});

test('an answer that is not JSON reaches submitters as the status and what was wrong, not the answer', async () => {
  const { reasons } = await failuresAfterOnePush(() => Promise.resolve({ status: 200, body: secret, retryAfter: undefined }));
  expect(reasons).toEqual(Array(2).fill('HTTP 200: the answer is not JSON (gave up after 1 attempts)'));
});
