/** A declared instrument made real on a meter: every value it records passes the attribute guard first. */
import type { Attributes, Meter, ObservableResult } from '@opentelemetry/api';

import type { AnyValues, AttributeGuard } from './attributes';
import type { InstrumentKind, MetricDeclaration } from './declare';

type Observation = (value: number, values: AnyValues) => void;
type ObserveCallback = (report: Observation) => void | Promise<void>;

interface Observable {
  addCallback(callback: (result: ObservableResult) => void | Promise<void>): void;
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
      const g = meter.createGauge(d.name, options);
      return { record: (value: number, v: AnyValues) => g.record(value, filter(v)) };
    },
    observableCounter: () => observer(meter.createObservableCounter(d.name, options)),
    observableUpDownCounter: () => observer(meter.createObservableUpDownCounter(d.name, options)),
    observableGauge: () => observer(meter.createObservableGauge(d.name, options)),
  };
  return create[d.kind]();
}
