/**
 * An OTLP/HTTP receiver in the test process: it accepts what an exporter sends as JSON
 * (https://opentelemetry.io/docs/specs/otlp/#otlphttp) on /v1/metrics and /v1/traces, and keeps it
 * flattened into spans and metric points, so a test can point an app (or a whole host) at it with
 * OTEL_EXPORTER_OTLP_ENDPOINT and assert what arrived.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

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
  readonly attributes?: OtlpAttribute[];
  readonly links?: { readonly traceId: string; readonly spanId: string }[];
}
interface OtlpPoint {
  readonly attributes?: OtlpAttribute[];
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
  readonly resourceSpans?: { readonly scopeSpans?: { readonly spans?: OtlpSpan[] }[] }[];
}
interface OtlpMetrics {
  readonly resourceMetrics?: {
    readonly resource?: { readonly attributes?: OtlpAttribute[] };
    readonly scopeMetrics?: { readonly metrics?: OtlpMetric[] }[];
  }[];
}

export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly name: string;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly links: readonly { readonly traceId: string; readonly spanId: string }[];
}

export interface ReceivedPoint {
  readonly metric: string;
  readonly unit: string | undefined;
  readonly attributes: Readonly<Record<string, unknown>>;
  /** A sum or gauge's value; a histogram's count. */
  readonly value: number;
  readonly max: number | undefined;
  readonly resource: Readonly<Record<string, unknown>>;
}

export interface OtlpReceiver {
  /** For OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly endpoint: string;
  readonly spans: ReceivedSpan[];
  readonly points: ReceivedPoint[];
  /** Every raw request body as text, to check nothing secret was sent at all. */
  readonly bodies: string[];
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

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  return (req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const points: ReceivedPoint[] = [];
  const bodies: string[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      const text = await bodyOf(req);
      bodies.push(text);
      if (!String(req.headers['content-type'] ?? '').includes('json')) {
        // Protobuf is not read here; the app's exporters send JSON.
        res.writeHead(415).end();
        return;
      }
      if (req.url === '/v1/traces') {
        for (const rs of (JSON.parse(text) as OtlpTraces).resourceSpans ?? []) {
          for (const s of (rs.scopeSpans ?? []).flatMap((ss) => ss.spans ?? [])) {
            spans.push({
              traceId: hexId(s.traceId) ?? '',
              spanId: hexId(s.spanId) ?? '',
              parentSpanId: hexId(s.parentSpanId),
              name: s.name,
              attributes: attributesOf(s.attributes),
              links: (s.links ?? []).map((l) => ({ traceId: hexId(l.traceId) ?? '', spanId: hexId(l.spanId) ?? '' })),
            });
          }
        }
      } else if (req.url === '/v1/metrics') {
        for (const rm of (JSON.parse(text) as OtlpMetrics).resourceMetrics ?? []) {
          const resource = attributesOf(rm.resource?.attributes);
          for (const m of (rm.scopeMetrics ?? []).flatMap((sm) => sm.metrics ?? [])) {
            const data = m.sum ?? m.gauge ?? m.histogram;
            for (const p of data?.dataPoints ?? []) {
              const value = m.histogram !== undefined ? Number(p.count ?? 0) : Number(p.asInt ?? p.asDouble ?? 0);
              points.push({ metric: m.name, unit: m.unit, attributes: attributesOf(p.attributes), value, max: p.max, resource });
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
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
