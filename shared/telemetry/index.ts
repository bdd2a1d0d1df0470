/** How capabilities record metrics and spans: the port, its providers' policy, the settings. */
export type { AttributePolicy } from './attributes';
export { freshGauges } from './freshGauges';
export { noTelemetry, type Telemetry, telemetryOf } from './port';
export { appResource, appVersion } from './resource';
