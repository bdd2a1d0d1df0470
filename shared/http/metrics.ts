/**
 * HTTP server metrics in the semantic conventions' own names and attributes
 * (https://opentelemetry.io/docs/specs/semconv/http/http-metrics/#metric-httpserverrequestduration):
 * one histogram, from which Azure Monitor's 5xx-rate alert and the workbook's request pages read.
 * The route is the template (`sequences/{name}/next`), never the path a caller sent.
 */
import { declareTelemetry, histogram, httpStatus, oneOf, operatorName } from '../telemetry/declare';
import { noTelemetry, type Telemetry } from '../telemetry/port';

const methods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'] as const;

export const httpTelemetry = declareTelemetry('tallyho.http', {
  duration: histogram({
    name: 'http.server.request.duration',
    unit: 's',
    description: 'Time from a request reaching a route to its answer; status 5xx counts toward the error-rate alert.',
    attributes: {
      'http.request.method': oneOf(...methods),
      'http.route': operatorName,
      'http.response.status_code': httpStatus,
      'error.type': operatorName,
    },
    boundaries: [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10],
  }),
});

export interface RequestMetrics {
  /** One answered request: its route template, method, status and time taken. */
  answered(route: string, method: string, status: number, seconds: number): void;
}

export function requestMetricsOf(telemetry: Telemetry = noTelemetry): RequestMetrics {
  const { duration } = telemetry.of(httpTelemetry).metrics;
  return {
    answered(route, method, status, seconds) {
      duration.record(seconds, {
        'http.request.method': method.toUpperCase() as (typeof methods)[number],
        'http.route': route,
        'http.response.status_code': status,
        // The conventions' error.type for a server error without an exception at hand: the status code.
        ...(status >= 500 ? { 'error.type': String(status) } : {}),
      });
    },
  };
}
