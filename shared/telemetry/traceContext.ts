/**
 * W3C trace context as the app carries it across its own hops (a job envelope, a job row, a gate
 * run's action): the `traceparent` text, checked on the way in. The propagator is the W3C one
 * whatever the process has registered globally, because the text is part of the app's own messages.
 */
import { context as otelContext, type Context, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import * as z from 'zod';

const propagator = new W3CTraceContextPropagator();

/** `00-<trace id>-<parent id>-<flags>`, lower-case hex (https://www.w3.org/TR/trace-context/#traceparent-header). */
export const traceparentSchema = z.string().regex(/^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/);

type Carrier = Record<string, string>;

const setter = {
  set: (carrier: Carrier, key: string, value: string) => {
    carrier[key] = value;
  },
};
const getter = {
  get: (carrier: Carrier, key: string) => carrier[key],
  keys: (carrier: Carrier) => Object.keys(carrier),
};

/** The traceparent of the span active in `ctx` (the current one by default), or undefined when there is none. */
export function traceparentOf(ctx: Context = otelContext.active()): string | undefined {
  if (trace.getSpanContext(ctx) === undefined) return undefined;
  const carrier: Carrier = {};
  propagator.inject(ctx, carrier, setter);
  return carrier.traceparent;
}

/** A context whose remote parent is `traceparent` (the root context when it is absent or malformed). */
export function contextOf(traceparent: string | undefined): Context {
  if (traceparent === undefined || !traceparentSchema.safeParse(traceparent).success) return ROOT_CONTEXT;
  return propagator.extract(ROOT_CONTEXT, { traceparent }, getter);
}
