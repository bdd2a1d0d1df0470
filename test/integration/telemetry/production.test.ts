/**
 * The app's own providers (shared/app/telemetry.ts) as production builds them from the environment:
 * which exporters, nothing at all without one, and the standard off switch.
 */
import { telemetryFromEnvironment } from '../../../shared/app/telemetry';
import { defaultAttributePolicy } from '../../../shared/telemetry/attributes';
import { noTelemetry } from '../../../shared/telemetry/port';
import { type OtlpReceiver, startOtlpReceiver } from '../../support/otlpReceiver';

describe('telemetry from the environment', () => {
  let receiver: OtlpReceiver;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
  });
  afterAll(() => receiver.close());

  it('exports to OTEL_EXPORTER_OTLP_ENDPOINT (what arrives there: test/e2e/telemetry.test.ts, in a host process)', () => {
    // The exporter loads node:http with a dynamic import(), which jest's module sandbox does not run.
    const app = telemetryFromEnvironment({ OTEL_EXPORTER_OTLP_ENDPOINT: `${receiver.endpoint}/` }, defaultAttributePolicy, 'instance-7');
    expect(app.exporters).toEqual(['otlp']);
    expect(app.telemetry).not.toBe(noTelemetry);
  });

  it('records nothing without an exporter, or when OTEL_SDK_DISABLED is true', () => {
    expect(telemetryFromEnvironment({}, defaultAttributePolicy, 'i').telemetry).toBe(noTelemetry);
    const disabled = telemetryFromEnvironment(
      {
        OTEL_SDK_DISABLED: 'true',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        APPLICATIONINSIGHTS_CONNECTION_STRING: 'InstrumentationKey=x',
      },
      defaultAttributePolicy,
      'i',
    );
    expect(disabled.exporters).toEqual([]);
  });

  it('chooses Azure Monitor when Application Insights is configured (exporting is not attempted here)', async () => {
    // The exporter's own usage reporting (statsbeat) starts a 15 s timer that outlives this file and
    // then fails inside jest's torn-down sandbox; its off switch is read from process.env
    // (APPLICATION_INSIGHTS_NO_STATSBEAT, @azure/monitor-opentelemetry-exporter export/base.ts).
    const statsbeat = process.env.APPLICATION_INSIGHTS_NO_STATSBEAT;
    process.env.APPLICATION_INSIGHTS_NO_STATSBEAT = 'true';
    const app = telemetryFromEnvironment(
      {
        APPLICATIONINSIGHTS_CONNECTION_STRING:
          'InstrumentationKey=00000000-0000-0000-0000-000000000000;IngestionEndpoint=http://127.0.0.1:9/',
        APPLICATIONINSIGHTS_AUTHENTICATION_STRING: 'ClientId=11111111-1111-1111-1111-111111111111;Authorization=AAD',
      },
      defaultAttributePolicy,
      'i',
    );
    if (statsbeat === undefined) delete process.env.APPLICATION_INSIGHTS_NO_STATSBEAT;
    else process.env.APPLICATION_INSIGHTS_NO_STATSBEAT = statsbeat;
    expect(app.exporters).toEqual(['azureMonitor']);
    // Nothing recorded, so the shutdown has nothing to send to the (unreachable) endpoint.
    await app.shutdown();
  });
});
