/**
 * The resource every metric and span of the app carries, found as the OpenTelemetry SDK finds it
 * (https://opentelemetry.io/docs/specs/otel/resource/sdk/) and in the order the Functions host finds
 * its own, so the host's spans and the app's carry the same `service.name`; from the lowest
 * precedence to the highest:
 *
 * 1. the SDK's own: `telemetry.sdk.name`, `.language`, `.version`;
 * 2. `service.name` `tallyho`;
 * 3. `OTEL_RESOURCE_ATTRIBUTES`, then `OTEL_SERVICE_NAME` (the SDK's environment detector), so an
 *    operator's `deployment.environment.name` or service name wins over the default;
 * 4. on Azure (WEBSITE_SITE_NAME set), what the Functions host reports about itself: `cloud.provider`
 *    `azure`, `cloud.platform` `azure_functions`, `cloud.region` (REGION_NAME), `cloud.resource.id`
 *    (the site's resource id) and the site's name as `service.name` (Azure/azure-functions-host,
 *    src/WebJobs.Script/Diagnostics/OpenTelemetry/FunctionsResourceDetector.cs; the JavaScript contrib
 *    detector spells the platform and the id differently, `azure.functions` and `cloud.resource_id`,
 *    so it is not used). The host adds that detector after the SDK's default one, which reads the
 *    OTEL_ variables, so on Azure the site's name wins over OTEL_SERVICE_NAME in the host's spans
 *    (OpenTelemetryConfigurationExtensions.cs; observed on host 4.1037 with both set:
 *    devhost/docs/real-host.md) — and here too;
 * 5. what only the app knows: `service.version` (package.json) and `service.instance.id` (this instance).
 *
 * The detectors read the process environment, where a Functions host puts the app settings.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import {
  defaultResource,
  type DetectedResource,
  detectResources,
  envDetector,
  type Resource,
  type ResourceDetector,
  resourceFromAttributes,
} from '@opentelemetry/resources';

const defaultServiceName = 'tallyho';

const setting = (name: string): string | undefined => {
  const text = process.env[name]?.trim();
  return text === undefined || text === '' ? undefined : text;
};

/** The Functions host's own detector, as it runs on Azure (and nothing elsewhere). */
const functionsHostDetector: ResourceDetector = {
  detect(): DetectedResource {
    const site = setting('WEBSITE_SITE_NAME');
    if (site === undefined) return { attributes: {} };
    const region = setting('REGION_NAME');
    const group = setting('WEBSITE_RESOURCE_GROUP');
    // WEBSITE_OWNER_NAME is `<subscription>+<webspace>`.
    const subscription = setting('WEBSITE_OWNER_NAME')?.split('+')[0];
    return {
      attributes: {
        'service.name': site,
        'cloud.provider': 'azure',
        'cloud.platform': 'azure_functions',
        ...(region === undefined ? {} : { 'cloud.region': region }),
        ...(group === undefined || subscription === undefined || subscription === ''
          ? {}
          : { 'cloud.resource.id': `/subscriptions/${subscription}/resourceGroups/${group}/providers/Microsoft.Web/sites/${site}` }),
      },
    };
  },
};

export function appResource(own: { readonly instanceId: string; readonly version: string | undefined }): Resource {
  return defaultResource()
    .merge(resourceFromAttributes({ 'service.name': defaultServiceName }))
    .merge(detectResources({ detectors: [envDetector] }))
    .merge(detectResources({ detectors: [functionsHostDetector] }))
    .merge(
      resourceFromAttributes({
        'service.instance.id': own.instanceId,
        ...(own.version === undefined ? {} : { 'service.version': own.version }),
      }),
    );
}

/**
 * The app's version: `version` of the nearest package.json above this file (the app's own, in the
 * repository and in the deployment package alike); undefined when there is none.
 */
export function appVersion(from: string = __dirname): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const parsed = JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown };
      return typeof parsed.version === 'string' ? parsed.version : undefined;
    }
    if (dirname(dir) === dir) return undefined;
  }
}
