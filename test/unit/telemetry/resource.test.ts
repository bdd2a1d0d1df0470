/**
 * The app's resource (shared/telemetry/resource.ts): the SDK's detection, in the order of precedence
 * the Functions host's own resource has, with what the host also reports on Azure (Azure/azure-functions-host
 * FunctionsResourceDetector.cs: cloud.provider, cloud.platform, cloud.region, cloud.resource.id and
 * the site as service.name).
 */
import { appResource, appVersion } from '../../../shared/telemetry/resource';

const variables = [
  'OTEL_RESOURCE_ATTRIBUTES',
  'OTEL_SERVICE_NAME',
  'WEBSITE_SITE_NAME',
  'FUNCTIONS_EXTENSION_VERSION',
  'REGION_NAME',
  'WEBSITE_RESOURCE_GROUP',
  'WEBSITE_OWNER_NAME',
] as const;

describe('the app’s resource', () => {
  const saved = new Map(variables.map((name) => [name, process.env[name]]));
  beforeEach(() => {
    for (const name of variables) delete process.env[name];
  });
  afterAll(() => {
    for (const [name, value] of saved)
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
  });

  const resource = (): Record<string, unknown> => ({ ...appResource({ instanceId: 'i-1', version: '1.2.3' }).attributes });

  it('locally: the SDK’s own attributes, service.name tallyho, the app’s version and instance', () => {
    expect(resource()).toEqual({
      'service.name': 'tallyho',
      'service.version': '1.2.3',
      'service.instance.id': 'i-1',
      'telemetry.sdk.name': 'opentelemetry',
      'telemetry.sdk.language': 'nodejs',
      'telemetry.sdk.version': expect.stringMatching(/^\d+\.\d+\.\d+/) as unknown,
    });
  });

  it('honours OTEL_RESOURCE_ATTRIBUTES, and OTEL_SERVICE_NAME over it', () => {
    process.env.OTEL_RESOURCE_ATTRIBUTES = 'deployment.environment.name=staging,service.name=from-attributes,team=ops';
    expect(resource()).toMatchObject({ 'deployment.environment.name': 'staging', team: 'ops', 'service.name': 'from-attributes' });
    process.env.OTEL_SERVICE_NAME = 'from-name';
    expect(resource()['service.name']).toBe('from-name');
  });

  it('on Azure Functions: the cloud attributes the host reports, and the site as service.name even where OTEL_SERVICE_NAME names another, as the host’s spans say', () => {
    Object.assign(process.env, {
      WEBSITE_SITE_NAME: 'tallyho-prod',
      FUNCTIONS_EXTENSION_VERSION: '~4',
      REGION_NAME: 'West Europe',
      WEBSITE_RESOURCE_GROUP: 'rg-tallyho',
      WEBSITE_OWNER_NAME: '00000000-1111-2222-3333-444444444444+rg-tallyho-WestEuropewebspace',
    });
    expect(resource()).toMatchObject({
      'service.name': 'tallyho-prod',
      'cloud.provider': 'azure',
      'cloud.platform': 'azure_functions',
      'cloud.region': 'West Europe',
      'cloud.resource.id':
        '/subscriptions/00000000-1111-2222-3333-444444444444/resourceGroups/rg-tallyho/providers/Microsoft.Web/sites/tallyho-prod',
      'service.instance.id': 'i-1',
    });
    // The real host (4.1037) with WEBSITE_SITE_NAME and OTEL_SERVICE_NAME both set exported its spans
    // with the site's name (devhost/docs/real-host.md): its own detector runs after the SDK's
    // environment one (Azure/azure-functions-host OpenTelemetryConfigurationExtensions.cs).
    process.env.OTEL_SERVICE_NAME = 'tallyho-named';
    process.env.OTEL_RESOURCE_ATTRIBUTES = 'deployment.environment.name=prod';
    expect(resource()).toMatchObject({ 'service.name': 'tallyho-prod', 'deployment.environment.name': 'prod' });
  });

  it('reads its version from the package.json above it', () => {
    expect(appVersion()).toMatch(/^\d+\.\d+\.\d+/);
  });
});
