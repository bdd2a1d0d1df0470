/**
 * Settings of the Functions host that the app's own declarations decide. The host reads
 * FUNCTIONS_REQUEST_BODY_SIZE_LIMIT (default 104857600 bytes) as the most it reads of any request
 * body, counted while the body arrives
 * (https://learn.microsoft.com/azure/azure-functions/functions-app-settings#functions_request_body_size_limit);
 * at twice the app's largest route limit it refuses a far larger body before the worker, or a buffer,
 * sees it (devhost/docs/real-host.md#request-body-limit has what the real host answers: a bare 500).
 * local.settings.sample.json and infra/app-settings.json carry these values (`npm run settings:sync`).
 */
import { httpSettings } from '../shared/http/settings';
import { jobSettings } from '../shared/jobs/settings';

/**
 * The largest body any route accepts at the default settings: the app-wide limit, or an endpoint's
 * own limit that replaces it (`POST /api/jobs`). Raising either setting means raising this too.
 */
const largestBodyBytes = Math.max(httpSettings.settings.maxBodyBytes.fallback, jobSettings.settings.maxRequestBytes.fallback);

/**
 * The host's limit: twice the app's largest, so a body a little over a route's limit still reaches
 * the app and gets its 413 problem naming the limit (the answer a client can act on), while a body
 * far over it is stopped by the host after a few MiB instead of read whole.
 */
export const hostBodyLimitBytes = 2 * largestBodyBytes;

export const hostSettings: Readonly<Record<string, string>> = {
  FUNCTIONS_REQUEST_BODY_SIZE_LIMIT: String(hostBodyLimitBytes),
};
