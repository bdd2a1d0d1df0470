/** The trace context the devhost gives an invocation, as the real host does (devhost/docs/real-host.md#trace-context). */
import { invocationTraceParent } from '../core/traceContext';

const shape = /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

describe('invocation trace context', () => {
  it('continues the trace of a valid traceparent header with a span id of its own, keeping its flags', () => {
    const parent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00';
    const child = invocationTraceParent(parent);
    expect(child).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-00$/);
    expect(child).not.toContain('b7ad6b7169203331');
    expect(invocationTraceParent([parent.toUpperCase()])).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-/);
  });

  it('starts a sampled trace without one, or with a malformed or all-zero one', () => {
    for (const header of [
      undefined,
      'nonsense',
      '00-00000000000000000000000000000000-b7ad6b7169203331-01',
      '00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01',
    ]) {
      const fresh = invocationTraceParent(header);
      expect(fresh).toMatch(shape);
      expect(fresh.endsWith('-01')).toBe(true);
      expect(fresh).not.toContain('0af7651916cd43dd8448eb211c80319c');
    }
    expect(invocationTraceParent()).not.toBe(invocationTraceParent());
  });
});
