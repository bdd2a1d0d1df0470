/**
 * The port a capability records through. The composition root builds one `Telemetry` from a meter
 * provider and a tracer provider (the SDK's, exporting wherever the settings say; in-memory ones in
 * tests) and hands it to every capability, which asks it for the instruments and spans it declared
 * (declare.ts). Nothing here keeps a provider in a module variable or reads the global ones.
 *
 * Without telemetry (`noTelemetry`) every instrument is a function that does nothing and a span only
 * runs its work: the hot paths then pay one call.
 */
import type { MeterProvider, TracerProvider } from '@opentelemetry/api';

import { type AnyValues, AttributeGuard, type AttributePolicy } from './attributes';
import type { AttributeValues, MetricDeclaration, ObservableKind, SpanDeclaration, TelemetryDeclarations } from './declare';
import { makeInstrument } from './instruments';
import { makeSpanRunner, quietRunner, type SpanRunner } from './spans';

type AttributesOfDeclaration<D> = D extends { readonly attributes: infer A } ? AttributeValues<A> : never;

interface Adder<V> {
  add(value: number, attributes?: V): void;
}
interface Recorder<V> {
  record(value: number, attributes?: V): void;
}
/** Reports one observation; an observable's callback calls it once per attribute set. */
type Report<V> = (value: number, attributes?: V) => void;
interface Observer<V> {
  /** Adds a callback the reader calls at each collection (it may be async: a storage read). */
  observe(callback: (report: Report<V>) => void | Promise<void>): void;
}

type InstrumentOf<D> =
  D extends MetricDeclaration<infer K>
    ? K extends 'counter' | 'upDownCounter'
      ? Adder<AttributesOfDeclaration<D>>
      : K extends ObservableKind
        ? Observer<AttributesOfDeclaration<D>>
        : Recorder<AttributesOfDeclaration<D>>
    : never;

type InstrumentsOf<M> = { readonly [K in keyof M]: InstrumentOf<M[K]> };
type SpansOf<S> = { readonly [K in keyof S]: SpanRunner<AttributesOfDeclaration<S[K]>> };

interface CapabilityTelemetry<M, S> {
  readonly metrics: InstrumentsOf<M>;
  readonly spans: SpansOf<S>;
}

type Metrics = Readonly<Record<string, MetricDeclaration>>;
type Spans = Readonly<Record<string, SpanDeclaration>>;

export interface Telemetry {
  /** The capability's instruments and spans; asking again with the same declarations answers the same ones. */
  of<M extends Metrics, S extends Spans>(declarations: TelemetryDeclarations<M, S>): CapabilityTelemetry<M, S>;
}

function mapValues<T extends object, R>(source: T, f: (value: T[keyof T]) => R): { [K in keyof T]: R } {
  return Object.fromEntries(Object.entries(source).map(([k, v]) => [k, f(v as T[keyof T])])) as { [K in keyof T]: R };
}

export interface Providers {
  readonly meters: MeterProvider;
  readonly tracers: TracerProvider;
  readonly policy: AttributePolicy;
}

type Build = <M extends Metrics, S extends Spans>(declarations: TelemetryDeclarations<M, S>) => CapabilityTelemetry<M, S>;

/**
 * A Telemetry whose instruments and spans are built once per declarations: a service made per
 * request, or code on a hot path (a gate's action), asks again and gets the same ones.
 */
function builtOnce(build: Build): Telemetry {
  const built = new WeakMap<TelemetryDeclarations, unknown>();
  return {
    of<M extends Metrics, S extends Spans>(declarations: TelemetryDeclarations<M, S>) {
      let made = built.get(declarations) as CapabilityTelemetry<M, S> | undefined;
      if (made === undefined) {
        made = build(declarations);
        built.set(declarations, made);
      }
      return made;
    },
  };
}

/** Telemetry recording through the given providers. */
export function telemetryOf(providers: Providers): Telemetry {
  const guard = new AttributeGuard(providers.policy);
  return builtOnce(<M extends Metrics, S extends Spans>(declarations: TelemetryDeclarations<M, S>) => {
    const meter = providers.meters.getMeter(declarations.scope);
    const tracer = providers.tracers.getTracer(declarations.scope);
    return {
      metrics: mapValues(declarations.metrics, (d) => makeInstrument(meter, guard, d)),
      spans: mapValues(declarations.spans, (d) => makeSpanRunner(tracer, guard, d)),
    } as CapabilityTelemetry<M, S>;
  });
}

const nothing = (): void => undefined;

/** No meter, no tracer: instruments do nothing and spans only run their work. */
export const noTelemetry: Telemetry = builtOnce(
  <M extends Metrics, S extends Spans>(declarations: TelemetryDeclarations<M, S>) =>
    ({
      metrics: mapValues(declarations.metrics, (d: MetricDeclaration): unknown =>
        d.kind === 'counter' || d.kind === 'upDownCounter'
          ? { add: nothing }
          : d.kind.startsWith('observable')
            ? { observe: nothing }
            : { record: nothing },
      ),
      spans: mapValues(declarations.spans, (): SpanRunner<AnyValues> => quietRunner),
    }) as CapabilityTelemetry<M, S>,
);
