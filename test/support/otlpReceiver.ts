/**
 * An OTLP/HTTP receiver in the test process: it accepts what an exporter sends
 * (https://opentelemetry.io/docs/specs/otlp/#otlphttp) on /v1/metrics and /v1/traces, and keeps it
 * flattened into spans and metric points, so a test can point an app (or a whole host) at it with
 * OTEL_EXPORTER_OTLP_ENDPOINT and assert what arrived. The app's exporters send JSON; the Functions
 * host's exporter sends protobuf (with OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf), of which the traces
 * are read (otlpProto.ts) and the rest (the host's own metrics and logs) only acknowledged and counted.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

import { tracesFromProtobuf } from './otlpProto';

interface OtlpValue {
  readonly stringValue?: string;
  readonly intValue?: string | number;
  readonly doubleValue?: number;
  readonly boolValue?: boolean;
}
interface OtlpAttribute {
  readonly key: string;
  readonly value: OtlpValue;
}
interface OtlpSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly kind?: number;
  readonly startTimeUnixNano?: string | number;
  readonly endTimeUnixNano?: string | number;
  readonly attributes?: OtlpAttribute[];
  readonly links?: { readonly traceId: string; readonly spanId: string; readonly attributes?: OtlpAttribute[] }[];
  readonly status?: { readonly code?: number };
}
interface OtlpPoint {
  readonly attributes?: OtlpAttribute[];
  readonly timeUnixNano?: string | number;
  readonly asInt?: string | number;
  readonly asDouble?: number;
  readonly count?: string | number;
  readonly sum?: number;
  readonly max?: number;
}
interface OtlpMetric {
  readonly name: string;
  readonly unit?: string;
  readonly sum?: { readonly dataPoints: OtlpPoint[] };
  readonly gauge?: { readonly dataPoints: OtlpPoint[] };
  readonly histogram?: { readonly dataPoints: OtlpPoint[] };
}
interface OtlpTraces {
  readonly resourceSpans?: {
    readonly resource?: { readonly attributes?: OtlpAttribute[] };
    readonly scopeSpans?: { readonly scope?: { readonly name?: string }; readonly spans?: OtlpSpan[] }[];
  }[];
}
interface OtlpMetrics {
  readonly resourceMetrics?: {
    readonly resource?: { readonly attributes?: OtlpAttribute[] };
    readonly scopeMetrics?: { readonly metrics?: OtlpMetric[] }[];
  }[];
}

/** OTLP's SpanKind numbers (opentelemetry/proto/trace/v1/trace.proto). */
const spanKinds = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'] as const;
type ReceivedSpanKind = (typeof spanKinds)[number];

interface ReceivedLink {
  readonly traceId: string;
  readonly spanId: string;
  readonly attributes: Readonly<Record<string, unknown>>;
}

export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly name: string;
  readonly kind: ReceivedSpanKind;
  /** Start and end in ms since the epoch (from the nanoseconds sent). */
  readonly startMs: number;
  readonly endMs: number;
  /** 0 unset, 1 ok, 2 error. */
  readonly status: number;
  readonly scope: string | undefined;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly links: readonly ReceivedLink[];
  /** The sender's resource attributes (`service.name`, …). */
  readonly resource: Readonly<Record<string, unknown>>;
  /** How it came: `json` (the app's exporters) or `protobuf` (the Functions host's). */
  readonly encoding: 'json' | 'protobuf';
}

export interface ReceivedPoint {
  readonly metric: string;
  readonly unit: string | undefined;
  readonly attributes: Readonly<Record<string, unknown>>;
  /** A sum or gauge's value; a histogram's count. */
  readonly value: number;
  readonly max: number | undefined;
  readonly resource: Readonly<Record<string, unknown>>;
  /**
   * When it was collected, in ms since the epoch (the point's `timeUnixNano`). The SDK takes the time
   * before it runs the observables' callbacks, so an observed point later than a moment was read after it.
   */
  readonly timeMs: number;
}

export interface OtlpReceiver {
  /** For OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly endpoint: string;
  readonly spans: ReceivedSpan[];
  readonly points: ReceivedPoint[];
  /** Every raw request body as text (protobuf bodies too: their strings are there as sent), to check nothing secret was sent at all. */
  readonly bodies: string[];
  /** The protobuf requests on paths other than /v1/traces (the host's metrics and logs): acknowledged, not read. */
  readonly unreadProtobuf: { readonly path: string; readonly bytes: number }[];
  close(): Promise<void>;
}

function valueOf(v: OtlpValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  return v.boolValue;
}

function attributesOf(list: readonly OtlpAttribute[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, valueOf(a.value)]));
}

/** OTLP/JSON ids are hex; an exporter that sends base64 (the protobuf mapping) is read as such. */
function hexId(id: string | undefined): string | undefined {
  if (id === undefined || id === '') return undefined;
  return /^[0-9a-f]+$/i.test(id) ? id.toLowerCase() : Buffer.from(id, 'base64').toString('hex');
}

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  return req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
}

const nanosToMs = (n: string | number | undefined): number => Number(BigInt(n ?? 0) / 1_000_000n);

function spansOf(traces: OtlpTraces, encoding: ReceivedSpan['encoding']): ReceivedSpan[] {
  return (traces.resourceSpans ?? []).flatMap((rs) => {
    const resource = attributesOf(rs.resource?.attributes);
    return (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((s): ReceivedSpan => ({
        traceId: hexId(s.traceId) ?? '',
        spanId: hexId(s.spanId) ?? '',
        parentSpanId: hexId(s.parentSpanId),
        name: s.name,
        kind: spanKinds[s.kind ?? 0] ?? 'unspecified',
        startMs: nanosToMs(s.startTimeUnixNano),
        endMs: nanosToMs(s.endTimeUnixNano),
        status: s.status?.code ?? 0,
        scope: ss.scope?.name,
        attributes: attributesOf(s.attributes),
        links: (s.links ?? []).map((l) => ({
          traceId: hexId(l.traceId) ?? '',
          spanId: hexId(l.spanId) ?? '',
          attributes: attributesOf(l.attributes),
        })),
        resource,
        encoding,
      })),
    );
  });
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const points: ReceivedPoint[] = [];
  const bodies: string[] = [];
  const unreadProtobuf: { path: string; bytes: number }[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      const raw = await bodyOf(req);
      const text = raw.toString('utf8');
      bodies.push(text);
      const type = String(req.headers['content-type'] ?? '');
      if (type.includes('protobuf')) {
        if (req.url === '/v1/traces') spans.push(...spansOf(tracesFromProtobuf(raw) as OtlpTraces, 'protobuf'));
        else unreadProtobuf.push({ path: req.url ?? '', bytes: raw.length });
        // An empty ExportTraceServiceResponse (and the others): full success.
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        return;
      }
      if (!type.includes('json')) {
        res.writeHead(415).end();
        return;
      }
      if (req.url === '/v1/traces') {
        spans.push(...spansOf(JSON.parse(text) as OtlpTraces, 'json'));
      } else if (req.url === '/v1/metrics') {
        for (const rm of (JSON.parse(text) as OtlpMetrics).resourceMetrics ?? []) {
          const resource = attributesOf(rm.resource?.attributes);
          for (const m of (rm.scopeMetrics ?? []).flatMap((sm) => sm.metrics ?? [])) {
            const data = m.sum ?? m.gauge ?? m.histogram;
            for (const p of data?.dataPoints ?? []) {
              const value = m.histogram !== undefined ? Number(p.count ?? 0) : Number(p.asInt ?? p.asDouble ?? 0);
              const timeMs = nanosToMs(p.timeUnixNano);
              points.push({ metric: m.name, unit: m.unit, attributes: attributesOf(p.attributes), value, max: p.max, resource, timeMs });
            }
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    points,
    bodies,
    unreadProtobuf,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
