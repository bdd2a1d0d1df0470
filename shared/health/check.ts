/**
 * Health: is this instance able to serve? The configuration must load, and each storage service
 * (blob, queue, table) must answer one cheap, read-only call with the app's own credentials. The
 * report names what failed and how (error code, HTTP status) but never a setting's value, a URL or
 * an SDK message, which could carry an account name, a key or a SAS token.
 */
import type { Clock } from '../clock';
import { type AppErrorCode, isAppError } from '../errors';
import type { StorageClients } from '../storage/clients';
import { statusOfError, translateStorageError } from '../storage/errors';

type CheckStatus = 'pass' | 'fail' | 'skipped';

interface CheckResult {
  readonly status: CheckStatus;
  readonly durationMs?: number;
  /** The AppError code the failure maps to. */
  readonly code?: AppErrorCode;
  /** The HTTP status storage answered with, when it answered (403: the identity lacks a role). */
  readonly httpStatus?: number;
  /** Names of invalid settings (never their values). */
  readonly settings?: readonly string[];
  readonly detail?: string;
}

export type CheckName = 'config' | 'blob' | 'queue' | 'table' | 'serviceBus';

export interface HealthReport {
  readonly status: 'healthy' | 'unhealthy';
  readonly checks: Readonly<Record<CheckName, CheckResult>>;
}

/** What health reads of the validated configuration: whether (and how) Service Bus is configured. */
interface ConfiguredConnections {
  readonly serviceBus: { readonly kind: string } | undefined;
}

export interface HealthDeps {
  /** The validated configuration; throws ConfigurationInvalid when a setting is bad. */
  readonly config: () => ConfiguredConnections;
  /** The app's storage clients (asked for once the configuration has loaded). */
  readonly storage: () => StorageClients;
  readonly clock: Clock;
}

function settingsOf(err: unknown): readonly string[] {
  const settings = isAppError(err) ? err.extra.settings : undefined;
  return Array.isArray(settings) ? settings.filter((s): s is string => typeof s === 'string') : [];
}

async function probe(clock: Clock, doing: string, call: () => Promise<unknown>): Promise<CheckResult> {
  const started = clock.now();
  try {
    await call();
    return { status: 'pass', durationMs: clock.now() - started };
  } catch (err) {
    const httpStatus = statusOfError(err);
    return {
      status: 'fail',
      durationMs: clock.now() - started,
      code: translateStorageError(err, doing).code,
      ...(httpStatus === undefined ? {} : { httpStatus }),
    };
  }
}

export async function checkHealth(deps: HealthDeps): Promise<HealthReport> {
  let config: ConfiguredConnections;
  try {
    config = deps.config();
  } catch (err) {
    const skipped: CheckResult = { status: 'skipped', detail: 'configuration invalid' };
    return {
      status: 'unhealthy',
      checks: {
        config: { status: 'fail', code: 'ConfigurationInvalid', settings: settingsOf(err) },
        blob: skipped,
        queue: skipped,
        table: skipped,
        serviceBus: skipped,
      },
    };
  }
  const storage = deps.storage();
  // One page of one item: the cheapest authenticated read each service has, and it needs only the
  // data roles the app already holds.
  const [blob, queue, table] = await Promise.all([
    probe(deps.clock, 'listing containers', () => storage.blobService.listContainers().byPage({ maxPageSize: 1 }).next()),
    probe(deps.clock, 'listing queues', () => storage.queueService.listQueues().byPage({ maxPageSize: 1 }).next()),
    probe(deps.clock, 'listing tables', () => storage.tableService.listTables().byPage({ maxPageSize: 1 }).next()),
  ]);
  const serviceBus: CheckResult =
    config.serviceBus === undefined
      ? { status: 'skipped', detail: 'not configured' }
      : { status: 'skipped', detail: `configured (${config.serviceBus.kind}); not probed` };
  const checks = { config: { status: 'pass' as const }, blob, queue, table, serviceBus };
  const failed = Object.values(checks).some((c) => c.status === 'fail');
  return { status: failed ? 'unhealthy' : 'healthy', checks };
}
