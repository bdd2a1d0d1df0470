/** The schedules capability's settings (shared/settings.ts explains the declarations). */
import { bool, custom, group, int, list, ncrontab, SettingProblems, type SettingsOf } from '../settings';

const allowedHostPattern = /^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*(:\d{1,5})?$/;

function allowedHosts(text: string): readonly string[] | SettingProblems {
  const hosts = text
    .split(/[,;]/)
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s.length > 0);
  const bad = hosts.filter((host) => !allowedHostPattern.test(host));
  return bad.length === 0 ? hosts : new SettingProblems(bad.map((host) => `"${host}" is not a host name, *.domain or host:port`));
}

export const scheduleSettings = group({
  webhookAllowedHosts: custom(
    'TALLYHO_SCHEDULES_WEBHOOK_ALLOWED_HOSTS',
    [] as readonly string[],
    '',
    'hosts a webhook target may call: `hooks.example.com`, `*.example.com`, optionally `:port` (443 otherwise); empty allows none',
    allowedHosts,
  ),
  webhookTimeoutMs: int(
    'TALLYHO_SCHEDULES_WEBHOOK_TIMEOUT_MS',
    10_000,
    100,
    120_000,
    'deadline of one webhook call, redirects and answer included',
  ),
  webhookMaxResponseBytes: int(
    'TALLYHO_SCHEDULES_WEBHOOK_MAX_RESPONSE_BYTES',
    64 * 1024,
    0,
    1024 * 1024,
    'answer bytes of a webhook read at most (the rest is discarded)',
  ),
  webhookMaxRedirects: int(
    'TALLYHO_SCHEDULES_WEBHOOK_MAX_REDIRECTS',
    3,
    0,
    10,
    'redirects a webhook call follows, each checked like the first URL',
  ),
  webhookAllowPrivateAddresses: bool(
    'TALLYHO_SCHEDULES_WEBHOOK_ALLOW_PRIVATE_ADDRESSES',
    false,
    'let webhooks reach loopback and private addresses, and plain http to a loopback host (local development only)',
  ),
  allowedQueues: list(
    'TALLYHO_SCHEDULES_ALLOWED_QUEUES',
    ['app-*'],
    'queues a queueMessage target may use: names or `prefix*`, comma-separated (app, host, task hub, poison queues never)',
  ),
  allowedServiceBusEntities: list(
    'TALLYHO_SCHEDULES_ALLOWED_SERVICEBUS_ENTITIES',
    ['app-*'],
    "Service Bus queues and topics a serviceBus target may send to: names or `prefix*`, comma-separated, any case (the app's own topics never)",
  ),
  misfireGraceSeconds: int(
    'TALLYHO_SCHEDULES_MISFIRE_GRACE_SECONDS',
    60,
    1,
    86_400,
    'a fire older than this when its schedule gets to it is missed (catch-up policy)',
  ),
  maxConcurrentRuns: int(
    'TALLYHO_SCHEDULES_MAX_CONCURRENT_RUNS',
    10,
    1,
    50,
    'runs of one schedule in progress at once under `overlap: allow` (1–50)',
  ),
  maxLive: int(
    'TALLYHO_SCHEDULES_MAX_LIVE',
    1000,
    1,
    100_000,
    'live (pending, active, paused) schedules past which a function-level create gets 409 (one owner may hold a quarter: 429 past it); admin creates are not capped',
  ),
  minCronIntervalSeconds: int(
    'TALLYHO_SCHEDULES_MIN_CRON_INTERVAL_SECONDS',
    60,
    1,
    86_400,
    'shortest time between two fires of a cron schedule created with a function key (400 below it); admin creates are not held to it',
  ),
  pollSeconds: int('TALLYHO_SCHEDULES_POLL_SECONDS', 30, 1, 3600, 'how often a schedule asks whether its job run has finished'),
  recheckSeconds: int(
    'TALLYHO_SCHEDULES_RECHECK_SECONDS',
    3600,
    10,
    7 * 86_400,
    'longest a schedule sleeps before re-reading its row (bounds the delay of a lost wake-up)',
  ),
  runCheckMs: int(
    'TALLYHO_SCHEDULES_RUN_CHECK_MS',
    1000,
    100,
    600_000,
    'how often a schedule reads its row while a run outlives the wait it started in (a slow webhook)',
  ),
  historyRuns: int('TALLYHO_SCHEDULES_HISTORY_RUNS', 20, 1, 200, 'run records kept per schedule'),
  reconcileSchedule: ncrontab(
    'TALLYHO_SCHEDULES_RECONCILE_SCHEDULE',
    '0 */5 * * * *',
    'when the reconciler completes pending creates and restarts lost orchestrations (six-field NCRONTAB)',
  ),
});

export type ScheduleSettings = SettingsOf<typeof scheduleSettings>;
