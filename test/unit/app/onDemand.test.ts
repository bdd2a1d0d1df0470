/**
 * The SDKs of shared/onDemand.ts stay unloaded until a deployment's settings call for them: the app
 * built as a Functions host builds it (productionApp; storage, no exporter, no Service Bus) loads none
 * of them, a setting that needs one loads it, and each getter names a package that loads.
 */
import type * as ProductionModule from '../../../shared/app/production';
import * as onDemand from '../../../shared/onDemand';

const packages = [
  '@azure/identity',
  '@azure/monitor-opentelemetry-exporter',
  '@azure/service-bus',
  '@opentelemetry/exporter-metrics-otlp-http',
  '@opentelemetry/exporter-trace-otlp-http',
];

/** In the isolated registry that follows, loading any of them throws, naming it. */
function refuseToLoad(): void {
  for (const name of packages)
    jest.doMock(name, () => {
      throw new Error(`loaded: ${name}`);
    });
}

const storageOnly = { AzureWebJobsStorage: 'UseDevelopmentStorage=true' };

type Production = typeof ProductionModule;
/** The composition root, loaded in the isolated registry after the refusals. */
function loadProduction(): Production {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- an import would be hoisted above the refusals
  return require('../../../shared/app/production') as Production;
}

describe('SDKs loaded on first use', () => {
  afterEach(() => {
    for (const name of packages) jest.dontMock(name);
  });

  it('building the app as a host does, with storage only, loads none of them', async () => {
    let app: ReturnType<Production['productionApp']> | undefined;
    jest.isolateModules(() => {
      refuseToLoad();
      app = loadProduction().productionApp(storageOnly);
    });
    expect(app?.config.serviceBus).toBeUndefined();
    await app?.shutdown();
  });

  it('a setting that needs one loads it when the app is built', () => {
    jest.isolateModules(() => {
      refuseToLoad();
      const { productionApp } = loadProduction();
      expect(() => productionApp({ ...storageOnly, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).toThrow(
        'loaded: @opentelemetry/exporter-trace-otlp-http',
      );
      expect(() => productionApp({ ...storageOnly, APPLICATIONINSIGHTS_CONNECTION_STRING: 'InstrumentationKey=x' })).toThrow(
        'loaded: @azure/monitor-opentelemetry-exporter',
      );
    });
  });

  it('each getter loads its package', () => {
    expect(typeof onDemand.identitySdk().ManagedIdentityCredential).toBe('function');
    expect(typeof onDemand.azureMonitorExporters().AzureMonitorTraceExporter).toBe('function');
    expect(typeof onDemand.serviceBusSdk().ServiceBusClient).toBe('function');
    expect(typeof onDemand.otlpMetricExporters().OTLPMetricExporter).toBe('function');
    expect(typeof onDemand.otlpTraceExporters().OTLPTraceExporter).toBe('function');
  });
});
