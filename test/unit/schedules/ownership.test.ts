/**
 * What a schedule's view shows to a reader of each key level (shared/schedules/views.ts): the whole
 * schedule to the admin key and to function-level readers of a schedule made at function level; an
 * admin-made schedule's target and failure reasons to nobody below admin; a webhook's answer body to
 * nobody below admin.
 */
import { creatorOf } from '../../../shared/schedules/creator';
import type { RunRecord } from '../../../shared/schedules/records';
import { parseRow } from '../../../shared/schedules/scheduleTable';
import { viewOf } from '../../../shared/schedules/views';

const queueTarget = { type: 'queueMessage', queue: 'app-ops', message: { apiToken: 'sk-live-123' } };
const webhookTarget = { type: 'webhook', url: 'https://hooks.example.com/x', payload: { secret: 's' } };

const failedWebhook: RunRecord = {
  runId: 's1#1',
  at: '2099-01-01T00:00:00.000Z',
  kind: 'scheduled',
  outcome: 'failed',
  reason: 'HTTP 500: stack trace at db.internal:5432',
};
const succeeded: RunRecord = {
  runId: 's1#2',
  at: '2099-01-02T00:00:00.000Z',
  kind: 'scheduled',
  outcome: 'succeeded',
  detail: 'queued 42',
};
const skipped: RunRecord = { at: '2099-01-03T00:00:00.000Z', kind: 'scheduled', outcome: 'skipped', reason: 'paused', count: 2 };

function row(target: unknown, createdBy: unknown, runs: readonly RunRecord[]) {
  return parseRow({
    partitionKey: 's1',
    etag: 'W/"1"',
    definition: JSON.stringify({ timing: { kind: 'once', at: '2099-01-01T00:00:00.000Z' }, target }),
    definitionKey: 'k',
    mode: 'orchestration',
    state: 'active',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    runs: JSON.stringify(runs),
    runCount: runs.length,
    triggers: '[]',
    controlVersion: 0,
    ackVersion: 0,
    ...(createdBy === undefined ? {} : { createdBy: JSON.stringify(createdBy) }),
  });
}

describe('schedule ownership: what each key level reads', () => {
  test("an admin-made schedule's target, payload and failure reasons are hidden from function-level readers", () => {
    const adminMade = row(queueTarget, creatorOf('ops', 'admin', 'admin:master-key'), [failedWebhook, succeeded, skipped]);
    const view = viewOf(adminMade, 'function');
    expect(view.target).toEqual({ type: 'queueMessage', redacted: true });
    expect(JSON.stringify(view)).not.toContain('sk-live-123');
    expect(JSON.stringify(view)).not.toContain('db.internal');
    expect(view.runs).toEqual([
      { ...failedWebhook, reason: 'failed (the reason is shown with the admin key)' },
      { runId: 's1#2', at: succeeded.at, kind: 'scheduled', outcome: 'succeeded' },
      skipped,
    ]);
    // When and how it runs stays visible: the caller may have a reason to watch it.
    expect(view).toMatchObject({ id: 's1', state: 'active', at: '2099-01-01T00:00:00.000Z', createdBy: { by: 'ops', level: 'admin' } });
  });

  test('a schedule whose creator was not recorded is read like an admin-made one', () => {
    expect(viewOf(row(queueTarget, undefined, []), 'function').target).toEqual({ type: 'queueMessage', redacted: true });
  });

  test('the admin key reads everything, whoever made it', () => {
    const adminMade = row(webhookTarget, creatorOf('ops', 'admin', 'admin:master-key'), [failedWebhook]);
    expect(viewOf(adminMade, 'admin')).toMatchObject({ target: webhookTarget, runs: [failedWebhook] });
    const fnMade = row(webhookTarget, creatorOf('app', 'function', 'key:shared'), [failedWebhook]);
    expect(viewOf(fnMade, 'admin')).toMatchObject({ target: webhookTarget, runs: [failedWebhook] });
  });

  test('a function-level reader of its own webhook schedule sees the target and the status, never what the endpoint answered', () => {
    const fnMade = row(webhookTarget, creatorOf('app', 'function', 'key:shared'), [
      failedWebhook,
      { ...failedWebhook, reason: 'HTTP 503' },
    ]);
    const view = viewOf(fnMade, 'function');
    expect(view.target).toEqual(webhookTarget);
    expect(view.runs.map((r) => r.reason)).toEqual(['HTTP 500', 'HTTP 503']);
  });

  test('a function-level reader of its own queue schedule sees everything', () => {
    const fnMade = row(queueTarget, creatorOf('app', 'function', 'key:shared'), [succeeded]);
    expect(viewOf(fnMade, 'function')).toMatchObject({ target: queueTarget, runs: [succeeded] });
  });
});
