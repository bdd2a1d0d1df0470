/**
 * Observed gauges that report only what was observed. The SDK keeps every series of an instrument
 * read with cumulative temporality and exports its last value at each collection, even when the
 * callback observed nothing for it this time: a backlog whose read failed went on exporting its last
 * depth (0, three times, while storage was down), and a resource that is gone kept its last figure.
 * With delta temporality the SDK exports, for an observable gauge, only the values observed in this
 * collection (a gauge has no temporality on the wire: OTLP gauges and Azure Monitor metrics are
 * values), so a failed read reports nothing — what Azure Monitor's "no data" alerts see. Every other
 * instrument keeps the exporter's own choice.
 */
import { AggregationTemporality, InstrumentType, type PushMetricExporter } from '@opentelemetry/sdk-metrics';

export function freshGauges(exporter: PushMetricExporter): PushMetricExporter {
  return {
    export: (metrics, done) => exporter.export(metrics, done),
    forceFlush: () => exporter.forceFlush(),
    shutdown: () => exporter.shutdown(),
    selectAggregationTemporality: (type) =>
      type === InstrumentType.OBSERVABLE_GAUGE
        ? AggregationTemporality.DELTA
        : (exporter.selectAggregationTemporality?.(type) ?? AggregationTemporality.CUMULATIVE),
    ...(exporter.selectAggregation === undefined ? {} : { selectAggregation: (type: InstrumentType) => exporter.selectAggregation!(type) }),
  };
}
