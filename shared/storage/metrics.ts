/**
 * Storage telemetry: responses by which Azure Storage says it is throttling the app — 503 Server Busy
 * and 500 Operation Timeout (https://learn.microsoft.com/azure/storage/common/scalability-targets-standard-account)
 * — counted as the SDK sees them, each retry included, so the alert sees the pressure before callers get 503s.
 */
import { counter, declareTelemetry, httpStatus, oneOf } from '../telemetry/declare';
import { noTelemetry, type Telemetry } from '../telemetry/port';
import type { StorageService } from './clients';

export const storageTelemetry = declareTelemetry('tallyho.storage', {
  throttled: counter({
    name: 'tallyho.storage.throttled',
    unit: '{response}',
    description: 'Storage responses that mean "slow down" (503 Server Busy, 500 Operation Timeout), retries included.',
    attributes: { 'tallyho.storage.service': oneOf('blob', 'queue', 'table'), 'http.response.status_code': httpStatus },
  }),
});

/** The `answered` observer of createStorageClients, recording throttling responses. */
export function storageResponsesOf(telemetry: Telemetry = noTelemetry): (service: StorageService, status: number) => void {
  const { throttled } = telemetry.of(storageTelemetry).metrics;
  return (service, status) => {
    if (status === 503 || status === 500) throttled.add(1, { 'tallyho.storage.service': service, 'http.response.status_code': status });
  };
}
