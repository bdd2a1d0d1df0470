/**
 * The process-wide half of tracing, set when the app loads (before the first invocation, which the
 * lazy app would be too late for): the async-context manager that lets a span follow an `await`,
 * the W3C propagator, and a hook that runs every handler inside the trace context the host gives
 * the invocation (its own span for the request, queue message or activity).
 *
 * The durable-functions client reads the same globals: it puts the active `traceparent` on the
 * requests that start orchestrations and signal entities (getDistributedTracingHeaders in its
 * DurableClient), which the Durable extension's distributed tracing continues (host.json).
 *
 * Why not @azure/functions-opentelemetry-instrumentation, which does the hook: it also declares the
 * worker's own log export (capability WorkerOpenTelemetryEnabled), and the app's logs stay with the
 * host, which exports them in its OpenTelemetry mode (host.json `telemetryMode`).
 */
import { app } from '@azure/functions';
import { context as otelContext, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

otelContext.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(new W3CTraceContextPropagator());

app.hook.preInvocation((hook) => {
  const parent = hook.invocationContext.traceContext;
  if (parent?.traceParent === undefined || parent.traceParent === null) return;
  const extracted = propagation.extract(otelContext.active(), {
    traceparent: parent.traceParent,
    ...(parent.traceState === undefined || parent.traceState === null ? {} : { tracestate: parent.traceState }),
  });
  const remote = trace.getSpanContext(extracted);
  if (remote === undefined) return;
  // A span object, not only its context, so that durable-functions (which asks for the active span) propagates it.
  hook.functionHandler = otelContext.bind(trace.setSpan(extracted, trace.wrapSpanContext(remote)), hook.functionHandler);
});
