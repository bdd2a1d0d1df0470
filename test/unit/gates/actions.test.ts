/** Run actions: the union validates at the edge; unknown types, extra fields and oversized payloads are refused. */
import { gateActionSchema, maxActionPayloadBytes, needsActivity } from '../../../shared/gates/actions';
import { runBody } from '../../../shared/gates/schemas';

describe('gate actions', () => {
  test.each([
    [{ type: 'none' }],
    [{ type: 'enqueue' }],
    [{ type: 'enqueue', payload: { shard: 3, tags: ['a'] } }],
    [{ type: 'enqueue', payload: 'text' }],
  ])('accepts %j', (action) => {
    expect(gateActionSchema.safeParse(action).success).toBe(true);
  });

  test.each([
    [{ type: 'webhook', url: 'https://example.com' }],
    [{ type: 'none', extra: 1 }],
    [{}],
    ['none'],
    [{ type: 'enqueue', payload: 'x'.repeat(maxActionPayloadBytes) }],
  ])('refuses %j', (action) => {
    expect(gateActionSchema.safeParse(action).success).toBe(false);
  });

  test('only actions with I/O need an activity', () => {
    expect(needsActivity({ type: 'none' })).toBe(false);
    expect(needsActivity({ type: 'enqueue' })).toBe(true);
  });

  test('a run body is optional, its runId is a resource name and unknown fields are refused', () => {
    expect(runBody.safeParse(undefined).success).toBe(true);
    expect(runBody.safeParse({ runId: 'w-1', action: { type: 'none' } }).success).toBe(true);
    expect(runBody.safeParse({ runId: 'has space' }).success).toBe(false);
    expect(runBody.safeParse({ runId: 'a:b' }).success).toBe(false);
    expect(runBody.safeParse({ action: { type: 'none' }, priority: 1 }).success).toBe(false);
  });
});
