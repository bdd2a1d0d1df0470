/**
 * The trace context the real host gives an HTTP invocation (InvocationRequest.traceContext), from its
 * own span for the request: a W3C traceparent whose trace continues the request's `traceparent` header
 * when it has a valid one, with a span id of its own, and otherwise starts a trace, sampled
 * (devhost/docs/real-host.md#trace-context; https://www.w3.org/TR/trace-context/#traceparent-header).
 */
import { randomBytes } from 'node:crypto';

const traceparent = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

export function invocationTraceParent(incoming?: string | readonly string[]): string {
  const header: string | undefined = typeof incoming === 'string' ? incoming : incoming?.[0];
  const match = typeof header === 'string' ? traceparent.exec(header.trim().toLowerCase()) : null;
  const parentTrace = match?.[1];
  const traceId =
    parentTrace !== undefined && !/^0+$/.test(parentTrace) && !/^0+$/.test(match?.[2] ?? '0')
      ? parentTrace
      : randomBytes(16).toString('hex');
  const flags = parentTrace === traceId ? (match?.[3] ?? '01') : '01';
  return `00-${traceId}-${randomBytes(8).toString('hex')}-${flags}`;
}
