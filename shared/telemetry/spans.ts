/** A declared span made real on a tracer: attributes guarded, a carried trace continued, failures recorded without their text. */
import { context as otelContext, type Context, type Link, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';

import { isAppError } from '../errors';
import type { AnyValues, AttributeGuard } from './attributes';
import type { SpanDeclaration, SpanKindName } from './declare';
import { contextOf, traceparentOf } from './traceContext';

/** The span a piece of work runs in. */
interface ActiveSpan<V> {
  setAttributes(attributes: V): void;
  /** The span's W3C traceparent, to carry across a hop (undefined without tracing). */
  traceparent(): string | undefined;
}

interface SpanOptions<V> {
  readonly attributes?: V;
  /**
   * A traceparent carried across a hop (an envelope, a job row): the span continues that trace, and
   * the span active here (the host's invocation) becomes a link. Absent: a child of the active span.
   */
  readonly parent?: string;
  /**
   * Traceparents of the work this span takes up (a batch of messages): links, as the messaging
   * conventions have a batch's consumer span, which starts a trace of its own (the invocation's
   * context becomes a link too). The real host hands a Durable activity an unsampled trace context:
   * a child of it would not be recorded at all.
   */
  readonly links?: readonly string[];
  /**
   * With `links`: the span stays a child of the active span (a request's server span), the carried
   * contexts only linked — the messaging conventions' receive span, answered within a request.
   */
  readonly inRequest?: boolean;
  /** When the work began, when that was before the span could be started (epoch ms). */
  readonly startTime?: number;
}

export interface SpanRunner<V> {
  run<T>(options: SpanOptions<V>, work: (span: ActiveSpan<V>) => Promise<T>): Promise<T>;
}

const spanKinds: Record<SpanKindName, SpanKind> = {
  internal: SpanKind.INTERNAL,
  producer: SpanKind.PRODUCER,
  consumer: SpanKind.CONSUMER,
  server: SpanKind.SERVER,
  client: SpanKind.CLIENT,
};

/** `error.type` (semantic conventions): the AppError code or the error's class, never its message. */
function errorType(err: unknown): string {
  if (isAppError(err)) return err.code;
  return err instanceof Error ? err.name : 'Error';
}

export function makeSpanRunner(tracer: Tracer, guard: AttributeGuard, d: SpanDeclaration): SpanRunner<AnyValues> {
  return {
    run(options, work) {
      const active = otelContext.active();
      let parent: Context = active;
      const links: Link[] = [];
      if (options.parent !== undefined || (options.links !== undefined && options.inRequest !== true)) {
        parent = contextOf(options.parent);
        const here = trace.getSpanContext(active);
        if (here !== undefined) links.push({ context: here });
      }
      for (const carried of options.links ?? []) {
        const linked = trace.getSpanContext(contextOf(carried));
        if (linked !== undefined) links.push({ context: linked });
      }
      const operation = d.messaging === undefined ? {} : { 'messaging.operation.type': d.messaging };
      const attributes = { ...guard.filter(d.attributes, options.attributes), ...operation };
      const start = options.startTime === undefined ? {} : { startTime: options.startTime };
      return tracer.startActiveSpan(d.name, { kind: spanKinds[d.kind], attributes, links, ...start }, parent, async (span) => {
        const handle: ActiveSpan<AnyValues> = {
          setAttributes: (values) => span.setAttributes(guard.filter(d.attributes, values)),
          traceparent: () => traceparentOf(trace.setSpan(otelContext.active(), span)),
        };
        try {
          return await work(handle);
        } catch (err) {
          span.setAttribute('error.type', errorType(err));
          span.setStatus({ code: SpanStatusCode.ERROR });
          throw err;
        } finally {
          span.end();
        }
      });
    },
  };
}

const nothing = (): void => undefined;
const quietSpan: ActiveSpan<AnyValues> = { setAttributes: nothing, traceparent: () => undefined };

/** Without a tracer a span only runs its work. */
export const quietRunner: SpanRunner<AnyValues> = { run: (_options, work) => work(quietSpan) };
