/**
 * The state of the telemetry-stopped alert (infra/modules/alerts.bicep `telemetry-stopped`: no metric
 * named under the app's prefix arrives within its window). While a host runs, the app's metrics keep
 * arriving through an OTLP receiver with no request made — its observed gauges are read at every
 * collection — and once the host has stopped, none arrives any more. "Within an export interval or
 * two" is counted in collections, not on a clock: a witness in this process, the SDK's periodic
 * reader at the same interval as the app's, counts its exports, and its exports after the stop are
 * the intervals that passed. (It keeps them itself: the OTLP exporter's transport is loaded by a
 * dynamic import that jest's module sandbox refuses.) Every
 * metric of the app that arrives is named under the prefix the alert's query reads (the module's
 * `appMetricPrefix`), apart from the one semantic-convention metric test/tools/infra/alerts.test.ts
 * names, so the alert reads exactly what the app exports.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { ExportResultCode } from '@opentelemetry/core';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';

import { telemetryStoppedFigure } from '../support/movingFigures';
import { claimHostStorage } from '../support/storageAccounts';
import { type OtlpReceiver, type ReceivedPoint, startOtlpReceiver } from '../support/otlpReceiver';
import { type E2eHost, describeOwnHost, repoRoot, startE2eHost } from './support/harness';
import { until } from './support/wait';

const exportIntervalMs = 1000;
const appService = 'tallyho-stopped-e2e';
/** The prefix the alert's query reads: `customMetrics | where name startswith '<appMetricPrefix>'`. */
const alertPrefix = /^var appMetricPrefix = '([^']+)'$/m.exec(
  readFileSync(join(repoRoot, 'infra', 'modules', 'alerts.bicep'), 'utf8'),
)?.[1];

describeOwnHost('telemetry-stopped: the app’s metrics arrive while a host runs, and stop when it stops', () => {
  let receiver: OtlpReceiver;
  let host: E2eHost | undefined;
  let witness: MeterProvider;
  /** When the witness exported, in ms since the epoch. */
  const witnessed: number[] = [];

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    // The witness: a meter provider of this process with one observed gauge, whose reader exports at the app's interval.
    witness = new MeterProvider({
      readers: [
        new PeriodicExportingMetricReader({
          exporter: {
            export: (_metrics, done) => {
              witnessed.push(Date.now());
              done({ code: ExportResultCode.SUCCESS });
            },
            forceFlush: () => Promise.resolve(),
            shutdown: () => Promise.resolve(),
          },
          exportIntervalMillis: exportIntervalMs,
        }),
      ],
    });
    witness
      .getMeter('witness')
      .createObservableGauge('witness.collections')
      .addCallback((result) => result.observe(1));
    host = await startE2eHost({
      env: {
        AzureWebJobsStorage: claimHostStorage(),
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_SERVICE_NAME: appService,
        OTEL_METRIC_EXPORT_INTERVAL: String(exportIntervalMs),
      },
    });
  });
  afterAll(async () => {
    await host?.dispose();
    await witness.shutdown();
    await receiver.close();
  });

  const appPoints = (): ReceivedPoint[] => receiver.points.filter((p) => p.resource['service.name'] === appService);

  test('app metrics arrive under the alert’s prefix while the host runs, and none within two export intervals after it stopped', async () => {
    expect(alertPrefix).toBe(telemetryStoppedFigure.prefix);
    const prefix = alertPrefix!;
    // The test makes no request of its own: what arrives is what a running app exports by itself, collection after collection.
    const own = (): ReceivedPoint[] => appPoints().filter((p) => p.metric.startsWith(prefix));
    await until(
      'app metrics from two collections',
      () => Promise.resolve(new Set(own().map((p) => p.timeMs)).size >= 2 ? true : undefined),
      120_000,
    );
    const names = [...new Set(appPoints().map((p) => p.metric))].sort();
    expect(names.filter((name) => !name.startsWith(prefix) && name !== 'http.server.request.duration')).toEqual([]);

    await host!.stop();
    host = undefined;
    const stoppedAt = Date.now();
    // Whatever the host sent before it ended has arrived once the witness's next collection has.
    await until(
      'a witness collection after the stop',
      () => Promise.resolve(witnessed.some((t) => t > stoppedAt) ? true : undefined),
      30_000,
    );
    const arrived = own().length;
    const lastCollection = Math.max(...witnessed);
    await until(
      'two more witness collections',
      () => Promise.resolve(witnessed.filter((t) => t > lastCollection).length >= 2 ? true : undefined),
      30_000,
    );
    expect({ arrivedAfterTheStop: own().length - arrived, collectedAfterTheStop: own().filter((p) => p.timeMs > stoppedAt) }).toEqual({
      arrivedAfterTheStop: 0,
      collectedAfterTheStop: [],
    });
  });
});
