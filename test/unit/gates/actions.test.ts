/**
 * Run actions: the union validates at the edge; unknown types, extra fields and oversized payloads are
 * refused; a job action is refused for what the jobs API refuses and is submitted, through the
 * effects runner, under a key that belongs to its run.
 */
import { type JobItem, jobKey } from '../../../shared/effects/effect';
import type { EffectPorts } from '../../../shared/effects/runner';
import { type ActionInput, performAction } from '../../../shared/gates/actionRunner';
import { actionFingerprint } from '../../../shared/gates/fingerprint';
import { gateActionSchema, maxActionPayloadBytes, runBody } from '../../../shared/gates/schemas';
import { AppError } from '../../../shared/errors';
import { transactions } from '../../support/billing';

const jobActionKey = (gate: string, runId: string): string => jobKey({ kind: 'gateRun', gate, generation: 1, runId });

const tx = transactions(2, 1, 'gate');

describe('gate actions', () => {
  test.each([
    [{ type: 'none' }],
    [{ type: 'enqueue' }],
    [{ type: 'enqueue', payload: { shard: 3, tags: ['a'] } }],
    [{ type: 'enqueue', payload: 'text' }],
    [{ type: 'job', processor: 'billing', items: tx }],
  ])('accepts %j', (action) => {
    expect(gateActionSchema.safeParse(action).success).toBe(true);
  });

  test.each([
    [{ type: 'webhook', url: 'https://example.com' }],
    [{ type: 'none', extra: 1 }],
    [{}],
    ['none'],
    [{ type: 'enqueue', payload: 'x'.repeat(maxActionPayloadBytes) }],
    // Not a processor name (which processors exist, in-app or declared, the jobs capability checks when the run starts).
    [{ type: 'job', processor: 'Payroll!', items: tx }],
    [{ type: 'job', processor: 'billing', items: [] }],
    [{ type: 'job', processor: 'billing' }],
    [{ type: 'job', items: tx }],
    [{ type: 'job', processor: 'billing', items: [{ ...tx[0], id: 'a/b' }] }],
    [{ type: 'job', processor: 'billing', items: [{ amountMinor: 1 }] }],
    [{ type: 'job', processor: 'billing', items: tx, priority: 'high' }],
    [{ type: 'job', processor: 'billing', items: tx, payload: {} }],
  ])('refuses %j', (action) => {
    expect(gateActionSchema.safeParse(action).success).toBe(false);
  });

  test("an action's fingerprint ignores the order of its fields and tells any other action apart", () => {
    const a = actionFingerprint({ type: 'enqueue', payload: { shard: 1, tags: ['x', 'y'] } });
    expect(actionFingerprint(gateActionSchema.parse({ payload: { tags: ['x', 'y'], shard: 1 }, type: 'enqueue' }))).toBe(a);
    expect(actionFingerprint({ type: 'enqueue', payload: { shard: 1, tags: ['y', 'x'] } })).not.toBe(a);
    expect(actionFingerprint({ type: 'enqueue', payload: { shard: 2, tags: ['x', 'y'] } })).not.toBe(a);
    expect(actionFingerprint({ type: 'enqueue' })).not.toBe(actionFingerprint({ type: 'none' }));
  });

  test('a failed action says what failed as a code and a message fit for callers, and nothing of an unexpected error', async () => {
    const ports = (submit: () => Promise<string>): EffectPorts => ({
      queue: () => Promise.reject(new Error('no queue')),
      serviceBusSender: () => undefined,
      webhook: { allowed: [], timeoutMs: 1000, maxResponseBytes: 0, maxRedirects: 0, allowPrivateAddresses: false },
      gates: undefined,
      jobs: { submit, status: () => Promise.reject(new Error('no status')) },
    });
    const action = gateActionSchema.parse({ type: 'job', processor: 'billing', items: tx });
    const input: ActionInput = { gate: 'launch', generation: 1, runId: 'w1', action };
    const conflict = ports(() =>
      Promise.reject(new AppError('Conflict', 'The Idempotency-Key was first used for a different job submission')),
    );
    await expect(performAction(conflict, input)).rejects.toMatchObject({
      code: 'Conflict',
      message: 'The Idempotency-Key was first used for a different job submission',
    });
    const crash = ports(() => Promise.reject(new TypeError('x is undefined at /srv/app/dist/jobs/submit.js:42')));
    const err = await performAction(crash, input).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'Internal', message: 'The job action failed' });
    expect(JSON.stringify(err)).not.toMatch(/srv|submit\.js/);
    // What a retry may cure is thrown as it came, for the caller to try again.
    const down = ports(() => Promise.reject(new AppError('DependencyUnavailable', 'Storage is unavailable; try again shortly')));
    await expect(performAction(down, input)).rejects.toMatchObject({ code: 'DependencyUnavailable' });
  });

  test('the job action submits through the jobs service under a key of its run: a retry repeats the key, another run does not', async () => {
    const calls: { request: { processor: string; items: readonly JobItem[] }; key: string }[] = [];
    const deps: EffectPorts = {
      queue: () => Promise.reject(new Error('a job action uses no queue')),
      serviceBusSender: () => undefined,
      webhook: { allowed: [], timeoutMs: 1000, maxResponseBytes: 0, maxRedirects: 0, allowPrivateAddresses: false },
      gates: undefined,
      jobs: {
        submit(processor, items, key) {
          calls.push({ request: { processor, items }, key });
          // The jobs service derives the id from the key; that is what makes a repeated key one job.
          return Promise.resolve(`job-for-${key}`);
        },
        status: () => Promise.reject(new Error('a gate run polls no job')),
      },
    };
    const action = gateActionSchema.parse({ type: 'job', processor: 'billing', items: tx });
    const input = (gate: string, runId: string): ActionInput => ({ gate, generation: 1, runId, action });
    const first = await performAction(deps, input('launch', 'w1'));
    const retried = await performAction(deps, input('launch', 'w1'));
    await performAction(deps, input('launch', 'w2'));
    await performAction(deps, input('other', 'w1'));
    expect(first).toEqual({ type: 'job', jobId: `job-for-${jobActionKey('launch', 'w1')}` });
    expect(retried).toEqual(first);
    expect(calls.map((c) => c.key)).toEqual([
      jobActionKey('launch', 'w1'),
      jobActionKey('launch', 'w1'),
      jobActionKey('launch', 'w2'),
      jobActionKey('other', 'w1'),
    ]);
    expect(new Set(calls.map((c) => c.key)).size).toBe(3);
    expect(calls[0]?.request).toEqual({ processor: 'billing', items: tx });
  });

  test('a run body is optional, its runId is a resource name and unknown fields are refused', () => {
    expect(runBody.safeParse(undefined).success).toBe(true);
    expect(runBody.safeParse({ runId: 'w-1', action: { type: 'none' } }).success).toBe(true);
    expect(runBody.safeParse({ runId: 'has space' }).success).toBe(false);
    expect(runBody.safeParse({ runId: 'a:b' }).success).toBe(false);
    expect(runBody.safeParse({ action: { type: 'none' }, priority: 1 }).success).toBe(false);
  });
});
