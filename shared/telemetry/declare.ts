/**
 * How a capability declares its telemetry, once, in its own `metrics.ts`: every instrument's name,
 * kind, unit, description and attributes, and every span with its attributes. The declarations are
 * data: the port (port.ts) builds the instruments from them, docs/operations.md lists them
 * (`npm run metrics:sync`), and infra's alerts are checked against them.
 *
 * An attribute says what kind of value it carries, and that decides whether a value may be recorded:
 * - `oneOf(...)`: a value the code enumerates (an outcome); anything else is recorded as `_OTHER`;
 * - `operatorName`: a name an operator or a setting defines (a processor, a queue, a partition),
 *   recorded as is, up to a cap of distinct values;
 * - `callerName(resource)`: a name a caller chose (a sequence, a gate), recorded only when
 *   TALLYHO_TELEMETRY_CALLER_NAMES allows it, and capped too;
 * - `httpStatus`: an HTTP status code (an integer, as the semantic conventions record it);
 * - `appId`: an id the app made (a job id) — on spans only: metric attributes must stay few.
 * There is no kind for item ids, keys, payloads or caller text: they cannot be declared.
 */

export type CallerResource = 'sequence' | 'counter' | 'gate' | 'schedule' | 'stream' | 'destination';

export interface EnumAttribute<V extends string = string> {
  readonly kind: 'enum';
  readonly values: readonly V[];
}
export interface OperatorNameAttribute {
  readonly kind: 'operator';
}
export interface CallerNameAttribute {
  readonly kind: 'caller';
  readonly resource: CallerResource;
}
export interface HttpStatusAttribute {
  readonly kind: 'httpStatus';
}
export interface AppIdAttribute {
  readonly kind: 'appId';
}

export type MetricAttribute = EnumAttribute | OperatorNameAttribute | CallerNameAttribute | HttpStatusAttribute;
export type SpanAttribute = MetricAttribute | AppIdAttribute;

export function oneOf<const V extends readonly string[]>(...values: V): EnumAttribute<V[number]> {
  return { kind: 'enum', values };
}
export const operatorName: OperatorNameAttribute = { kind: 'operator' };
export function callerName(resource: CallerResource): CallerNameAttribute {
  return { kind: 'caller', resource };
}
export const httpStatus: HttpStatusAttribute = { kind: 'httpStatus' };
export const appId: AppIdAttribute = { kind: 'appId' };

type ValueOf<A> = A extends EnumAttribute<infer V> ? V : A extends HttpStatusAttribute ? number : string;

/** What a record call passes: any of the declared attributes, each a value of its kind. */
export type AttributeValues<A> = { readonly [K in keyof A]?: ValueOf<A[K]> };

type SyncKind = 'counter' | 'upDownCounter' | 'histogram' | 'gauge';
export type ObservableKind = 'observableCounter' | 'observableUpDownCounter' | 'observableGauge';
export type InstrumentKind = SyncKind | ObservableKind;

export interface MetricDeclaration<K extends InstrumentKind = InstrumentKind, A = Readonly<Record<string, MetricAttribute>>> {
  readonly kind: K;
  /** `tallyho.<capability>.<what>`: lower case, dot-separated (OpenTelemetry naming guidelines). */
  readonly name: string;
  /** UCUM: `s`, `By`, or a `{annotation}` for counts (`{item}`). */
  readonly unit: string;
  readonly description: string;
  readonly attributes: A;
  /** Histogram bucket boundaries, in the instrument's unit. */
  readonly boundaries?: readonly number[];
  /**
   * How an observable combines values reported for the same attributes in one collection (default:
   * sum). A gauge over caller-named resources must declare it: it then keeps each resource's latest
   * reading and exports their sum or maximum (instruments.ts latestPerResource).
   */
  readonly combine?: 'sum' | 'max';
}

interface MetricOptions<A> {
  readonly name: string;
  readonly unit: string;
  readonly description: string;
  readonly attributes?: A;
}

type NoAttributes = Readonly<Record<never, MetricAttribute>>;

function declare<K extends InstrumentKind>(kind: K) {
  return <A extends Readonly<Record<string, MetricAttribute>> = NoAttributes>(
    options: MetricOptions<A> & { readonly boundaries?: readonly number[]; readonly combine?: 'sum' | 'max' },
  ): MetricDeclaration<K, A> => ({ kind, ...options, attributes: options.attributes ?? ({} as A) });
}

export const counter = declare('counter');
export const histogram = declare('histogram');
export const gauge = declare('gauge');
export const observableCounter = declare('observableCounter');
export const observableGauge = declare('observableGauge');

/** Seconds, for waits from milliseconds to an hour (lateness, lag, fan-out). */
export const latencyBuckets: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

export type SpanKindName = 'internal' | 'producer' | 'consumer' | 'server' | 'client';

/** The messaging semantic conventions' operation types (https://opentelemetry.io/docs/specs/semconv/messaging/messaging-spans/). */
export type MessagingOperation = 'create' | 'send' | 'receive' | 'process' | 'settle';

export interface SpanDeclaration<A = Readonly<Record<string, SpanAttribute>>> {
  readonly name: string;
  readonly kind: SpanKindName;
  readonly description: string;
  readonly attributes: A;
  /** The messaging operation the span is (work crossing a queue): every such span carries `messaging.operation.type`. */
  readonly messaging?: MessagingOperation;
}

export function span<A extends Readonly<Record<string, SpanAttribute>>>(options: {
  readonly name: string;
  readonly kind?: SpanKindName;
  readonly description: string;
  readonly attributes?: A;
  readonly messaging?: MessagingOperation;
}): SpanDeclaration<A> {
  return { kind: 'internal', ...options, attributes: options.attributes ?? ({} as A) };
}

/** One capability's declarations: its meter's name, its instruments and its spans. */
export interface TelemetryDeclarations<
  M extends Readonly<Record<string, MetricDeclaration>> = Readonly<Record<string, MetricDeclaration>>,
  S extends Readonly<Record<string, SpanDeclaration>> = Readonly<Record<string, SpanDeclaration>>,
> {
  /** The instrumentation scope (meter and tracer name): `tallyho.<capability>`. */
  readonly scope: string;
  readonly metrics: M;
  readonly spans: S;
}

export function declareTelemetry<
  const M extends Readonly<Record<string, MetricDeclaration>>,
  const S extends Readonly<Record<string, SpanDeclaration>> = Readonly<Record<never, SpanDeclaration>>,
>(scope: string, metrics: M, spans?: S): TelemetryDeclarations<M, S> {
  return { scope, metrics, spans: spans ?? ({} as S) };
}
