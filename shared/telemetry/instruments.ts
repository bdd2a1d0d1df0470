/** A declared instrument made real on a meter: every value it records passes the attribute guard first. */
import type { Attributes, Meter, ObservableResult } from '@opentelemetry/api';

import type { AnyValues, AttributeGuard } from './attributes';
import type { InstrumentKind, MetricDeclaration } from './declare';

type Observation = (value: number, values: AnyValues) => void;
type ObserveCallback = (report: Observation) => void | Promise<void>;

interface Observable {
  addCallback(callback: (result: ObservableResult) => void | Promise<void>): void;
}

/** Collections an entry of `latestPerResource` outlives without a new reading (5 minutes at Azure's 60 s export). */
export const staleAfterCollections = 5;

/**
 * A gauge over resources a caller names (a counter's pending hits, a gate's waiting runs), declared
 * with `combine`: each resource's latest reading is kept, keyed by its full attributes, and at each
 * collection the readings that map to one exported attribute set are summed (or the largest taken).
 * With caller names left out of the telemetry, the one series is then the sum over all resources
 * read here, not whichever was read last. A resource not read again for `staleAfterCollections`
 * collections drops out (a deleted gate stops counting). Bounded by the resources there can be.
 */
function latestPerResource(gauge: { observe(callback: ObserveCallback): void }): { record(value: number, v: AnyValues): void } {
  const latest = new Map<string, { readonly values: AnyValues; value: number; age: number }>();
  gauge.observe((report) => {
    for (const [key, entry] of latest) {
      if (entry.age++ >= staleAfterCollections) latest.delete(key);
      else report(entry.value, entry.values);
    }
  });
  return {
    record: (value, values) => {
      const key = JSON.stringify(Object.entries(values ?? {}).sort(([a], [b]) => (a < b ? -1 : 1)));
      latest.set(key, { values, value, age: 0 });
    },
  };
}

export function makeInstrument(meter: Meter, guard: AttributeGuard, d: MetricDeclaration): unknown {
  const cache = Object.keys(d.attributes).length === 0 ? undefined : guard.cacheFor(d.attributes);
  const filter = cache === undefined ? (): Attributes | undefined => undefined : (v: AnyValues) => cache.get(v);
  const options = {
    description: d.description,
    unit: d.unit,
    ...(d.boundaries === undefined ? {} : { advice: { explicitBucketBoundaries: [...d.boundaries] } }),
  };
  // Values reported for one attribute set in one collection are combined (summed, or the largest for
  // a gauge declared `combine: 'max'`): a name the policy leaves out must not keep only the last of
  // the values it stands for.
  const combine = d.combine === 'max' ? Math.max : (a: number, b: number): number => a + b;
  const observer = (o: Observable) => ({
    observe: (callback: ObserveCallback) =>
      o.addCallback(async (result) => {
        const seen = new Map<string, { readonly attributes: Attributes | undefined; value: number }>();
        await callback((value, v) => {
          const attributes = filter(v);
          const key = attributes === undefined ? '' : JSON.stringify(Object.entries(attributes).sort());
          const known = seen.get(key);
          if (known === undefined) seen.set(key, { attributes, value });
          else known.value = combine(known.value, value);
        });
        for (const { attributes, value } of seen.values()) result.observe(value, attributes);
      }),
  });
  const create: Record<InstrumentKind, () => unknown> = {
    counter: () => {
      const c = meter.createCounter(d.name, options);
      return { add: (value: number, v: AnyValues) => c.add(value, filter(v)) };
    },
    upDownCounter: () => {
      const c = meter.createUpDownCounter(d.name, options);
      return { add: (value: number, v: AnyValues) => c.add(value, filter(v)) };
    },
    histogram: () => {
      const h = meter.createHistogram(d.name, options);
      return { record: (value: number, v: AnyValues) => h.record(value, filter(v)) };
    },
    gauge: () => {
      if (d.combine === undefined) {
        const g = meter.createGauge(d.name, options);
        return { record: (value: number, v: AnyValues) => g.record(value, filter(v)) };
      }
      return latestPerResource(observer(meter.createObservableGauge(d.name, options)));
    },
    observableCounter: () => observer(meter.createObservableCounter(d.name, options)),
    observableUpDownCounter: () => observer(meter.createObservableUpDownCounter(d.name, options)),
    observableGauge: () => observer(meter.createObservableGauge(d.name, options)),
  };
  return create[d.kind]();
}
