/**
 * The host's span for each HTTP request, exported as the real host exports it in its OpenTelemetry
 * mode, so that the spans the app starts under an invocation have their root at the collector on the
 * devhost too (devhost/docs/real-host.md#request-spans, observed on host 4.1037 through the OTLP
 * receiver of test/support/otlpReceiver.ts):
 *
 * - one server span per request, named by its method (`POST`), in the `Microsoft.AspNetCore` scope,
 *   continuing the request's `traceparent` (a new sampled trace without a valid one; an unsampled
 *   parent gives an unsampled span, which is not exported);
 * - attributes `http.request.method`, `url.scheme`, `url.path`, `url.query` (values redacted),
 *   `server.address`, `server.port`, `network.protocol.version`, `user_agent.original`,
 *   `http.response.status_code`, and for a request that reached a function `faas.name` and
 *   `faas.trigger` (`http`); a 5xx answer is an error (status and `error.type`);
 * - the invocation's trace context is this span: the app's spans are its children.
 *
 * Like the host, it exports only when OTEL_EXPORTER_OTLP_ENDPOINT is set (the per-signal endpoint
 * alone turns nothing on), to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or `<endpoint>/v1/traces`, in the
 * protocol OTEL_EXPORTER_OTLP_PROTOCOL names. The host's default protocol is gRPC, which the devhost
 * does not speak: it then says so once and exports nothing, rather than succeed where the host fails.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import { defaultTextMapGetter, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import type * as OtlpHttp from '@opentelemetry/exporter-trace-otlp-http';
import type * as OtlpProto from '@opentelemetry/exporter-trace-otlp-proto';

import { getSetting } from '../app/settings';
import { invocationTraceParent } from '../core/traceContext';
import type { HostLogger } from '../log';

export interface RequestSpan {
  /** The invocation's W3C traceparent (InvocationRequest.traceContext). */
  readonly traceParent: string;
  /** The request reached this function (`faas.name`). */
  reached(functionName: string): void;
}

export interface RequestTracing {
  /** A span for the request, ended when its response is done. */
  start(req: IncomingMessage, res: ServerResponse, url: URL): RequestSpan;
  /** Exports what is pending. */
  shutdown(): Promise<void>;
}

const noSpan = (req: IncomingMessage): RequestSpan => ({
  traceParent: invocationTraceParent(req.headers.traceparent),
  reached: () => undefined,
});

/** Without an exporter: the invocation still gets a trace context of its own, as on the host. */
const untraced: RequestTracing = { start: noSpan, shutdown: () => Promise.resolve() };

type Settings = Readonly<Record<string, string | undefined>>;

/** The exporter for the protocol, or why there is none. */
function exporterFor(settings: Settings): SpanExporter | string | undefined {
  const endpoint = getSetting(settings, 'OTEL_EXPORTER_OTLP_ENDPOINT')?.trim();
  if (endpoint === undefined || endpoint === '') return undefined;
  if (getSetting(settings, 'OTEL_SDK_DISABLED')?.trim().toLowerCase() === 'true') return undefined;
  const url = getSetting(settings, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT')?.trim() || `${endpoint.replace(/\/+$/, '')}/v1/traces`;
  const protocol = (getSetting(settings, 'OTEL_EXPORTER_OTLP_PROTOCOL')?.trim() ?? '').toLowerCase();
  // Loaded only when used: a devhost that exports nothing loads no exporter.
  /* eslint-disable @typescript-eslint/no-require-imports -- on demand, as shared/onDemand.ts does for the app */
  if (protocol === 'http/protobuf') {
    const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-proto') as typeof OtlpProto;
    return new OTLPTraceExporter({ url });
  }
  if (protocol === 'http/json') {
    const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http') as typeof OtlpHttp;
    return new OTLPTraceExporter({ url });
  }
  /* eslint-enable @typescript-eslint/no-require-imports */
  return (
    `OTEL_EXPORTER_OTLP_PROTOCOL is ${protocol === '' ? 'unset' : `"${protocol}"`}: the Functions host would send its request spans ` +
    'over OTLP/gRPC, which the devhost does not speak, so it exports none. Set OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf ' +
    '(both hosts export over OTLP/HTTP then; docs/operations.md#metrics-and-traces).'
  );
}

const propagator = new W3CTraceContextPropagator();

function traceParentOf(span: Span): string {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, '0')}`;
}

/** `?a=Redacted&b=Redacted`: the names of the query's parameters, never their values (as the host records it). */
function redactedQuery(url: URL): string | undefined {
  const names = [...url.searchParams.keys()];
  return names.length === 0 ? undefined : `?${names.map((name) => `${name}=Redacted`).join('&')}`;
}

function startSpan(tracer: Tracer, req: IncomingMessage, res: ServerResponse, url: URL): RequestSpan {
  const method = (req.method ?? 'GET').toUpperCase();
  const host = /^\[?([^\]]*?)\]?(?::(\d+))?$/.exec(req.headers.host ?? '');
  const query = redactedQuery(url);
  const userAgent = req.headers['user-agent'];
  const parent = propagator.extract(ROOT_CONTEXT, req.headers, defaultTextMapGetter);
  const span = tracer.startSpan(
    method,
    {
      kind: SpanKind.SERVER,
      attributes: {
        'server.address': host?.[1] || 'localhost',
        ...(host?.[2] === undefined ? {} : { 'server.port': Number(host[2]) }),
        ...(query === undefined ? {} : { 'url.query': query }),
        'http.request.method': method,
        'url.scheme': 'http',
        'url.path': url.pathname,
        'network.protocol.version': req.httpVersion,
        ...(userAgent === undefined ? {} : { 'user_agent.original': userAgent }),
      },
    },
    parent,
  );
  res.once('close', () => {
    const status = res.statusCode;
    span.setAttribute('http.response.status_code', status);
    if (status >= 500) {
      span.setAttribute('error.type', String(status));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  });
  return {
    traceParent: traceParentOf(span),
    reached: (functionName) => span.setAttributes({ 'faas.name': functionName, 'faas.trigger': 'http' }),
  };
}

export function requestTracing(settings: Settings, log: HostLogger): RequestTracing {
  const exporter = exporterFor(settings);
  if (exporter === undefined) return untraced;
  if (typeof exporter === 'string') {
    log('warn', exporter);
    return untraced;
  }
  // The host's resource as far as it applies here: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
  // (the app's settings are in this process's environment), the SDK's own attributes, the process.
  // Without OTEL_SERVICE_NAME the real host's spans say `unknown_service:dotnet` (the .NET SDK's
  // default; observed on 4.1037, devhost/docs/real-host.md), so the devhost's say the same.
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.name': 'unknown_service:dotnet', 'process.pid': process.pid }))
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new BasicTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000 })],
  });
  const tracer = provider.getTracer('Microsoft.AspNetCore');
  return {
    start: (req, res, url) => startSpan(tracer, req, res, url),
    shutdown: () => provider.shutdown(),
  };
}
