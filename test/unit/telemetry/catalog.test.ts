/**
 * The declarations as a whole: docs/operations.md lists exactly them (`npm run metrics:sync`), and
 * each follows the OpenTelemetry naming guidelines (https://opentelemetry.io/docs/specs/semconv/general/metrics/)
 * with attributes that cannot grow without bound.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { withTelemetryTables } from '../../../docgen/metricsDoc';
import { declaredMetrics, declaredSpans } from '../../../docgen/telemetryCatalog';

const root = join(__dirname, '..', '..', '..');
const read = (name: string): string => readFileSync(join(root, name), 'utf8');

/** Attributes the semantic conventions define, used with their own meaning; everything else is `tallyho.*`. */
const conventionAttributes = new Set([
  'http.request.method',
  'http.route',
  'http.response.status_code',
  'error.type',
  'messaging.destination.name',
]);

describe('telemetry declarations', () => {
  it('docs/operations.md lists every metric and span as declared (npm run metrics:sync)', () => {
    const page = read('docs/operations.md');
    expect(page).toBe(withTelemetryTables(page));
    for (const { metric } of declaredMetrics()) expect(page).toContain(`\`${metric.name}\``);
  });

  it('names are unique, lower case and dotted, in the app namespace (or the conventions’ own)', () => {
    const names = [...declaredMetrics().map((m) => m.metric.name), ...declaredSpans().map((s) => s.span.name)];
    expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
    for (const name of declaredMetrics().map((m) => m.metric.name)) {
      expect(name === 'http.server.request.duration' || /^tallyho\.[a-z]+(\.[a-z_]+)+$/.test(name)).toBe(true);
    }
    for (const { span } of declaredSpans()) expect(span.name).toMatch(/^tallyho\.[a-z]+(\.[a-z_]+)+$/);
  });

  it('units are UCUM: seconds, bytes, or an annotation for a count', () => {
    for (const { metric } of declaredMetrics()) expect(metric.unit).toMatch(/^(s|By|1|\{[a-z]+\})$/);
  });

  it('metric attributes are bounded: no app ids, and every key is the app’s or a convention’s', () => {
    for (const { metric } of declaredMetrics()) {
      for (const [key, spec] of Object.entries(metric.attributes)) {
        expect((spec as { kind: string }).kind).not.toBe('appId');
        expect(key.startsWith('tallyho.') || conventionAttributes.has(key)).toBe(true);
      }
    }
  });

  it('histograms in seconds have boundaries in seconds (none above an hour)', () => {
    for (const { metric } of declaredMetrics().filter((m) => m.metric.kind === 'histogram' && m.metric.unit === 's')) {
      expect(metric.boundaries?.length).toBeGreaterThan(0);
      expect(Math.max(...(metric.boundaries ?? []))).toBeLessThanOrEqual(3600);
    }
  });
});
