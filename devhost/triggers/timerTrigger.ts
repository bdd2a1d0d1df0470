/**
 * Timer triggers on the host clock (so a virtual clock fast-forwards them). Like the real listener:
 * the next occurrence is armed after an invocation finishes (runs never overlap), `runOnStartup`
 * fires once at start, and a monitored schedule (`useMonitor`, default on for intervals of a minute
 * or more) keeps its status in blob storage — `azure-webjobs-hosts/timers/<hostId>/<function>/status`
 * — so a host that was down when an occurrence was due fires once at start with `isPastDue: true`.
 * A run is also past due when it starts more than a second after its scheduled time.
 */
import type { BlobServiceClient } from '@azure/storage-blob';

import type { HostClock } from '../clock';
import { failedBeforeRun, type InvocationOutcome, type Invoker } from '../core/invoker';
import type { FunctionMetadata, RpcParameterBinding } from '../core/types';
import type { HostLogger } from '../log';
import type { Schedule } from './schedule';

const pastDueToleranceMs = 1000;

export interface ScheduleStatus {
  readonly last: number | undefined;
  readonly next: number | undefined;
  readonly lastUpdated: number | undefined;
}

export interface TimerStatusStore {
  read(functionName: string): Promise<ScheduleStatus | undefined>;
  write(functionName: string, status: ScheduleStatus): Promise<void>;
}

export class MemoryTimerStatusStore implements TimerStatusStore {
  private readonly statuses = new Map<string, ScheduleStatus>();

  read(functionName: string): Promise<ScheduleStatus | undefined> {
    return Promise.resolve(this.statuses.get(functionName));
  }

  write(functionName: string, status: ScheduleStatus): Promise<void> {
    this.statuses.set(functionName, status);
    return Promise.resolve();
  }
}

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());
const parse = (value: unknown): number | undefined => {
  const ms = typeof value === 'string' ? Date.parse(value) : NaN;
  return Number.isNaN(ms) ? undefined : ms;
};

/** The real host's layout: one status blob per timer function in `azure-webjobs-hosts`. */
export class BlobTimerStatusStore implements TimerStatusStore {
  private created: Promise<unknown> | undefined;

  constructor(
    private readonly service: BlobServiceClient,
    private readonly hostId: string,
  ) {}

  private blob(functionName: string): ReturnType<ReturnType<BlobServiceClient['getContainerClient']>['getBlockBlobClient']> {
    return this.service
      .getContainerClient('azure-webjobs-hosts')
      .getBlockBlobClient(`timers/${this.hostId}/Host.Functions.${functionName}/status`);
  }

  async read(functionName: string): Promise<ScheduleStatus | undefined> {
    try {
      const raw = JSON.parse((await this.blob(functionName).downloadToBuffer()).toString('utf8')) as Record<string, unknown>;
      return { last: parse(raw.Last), next: parse(raw.Next), lastUpdated: parse(raw.LastUpdated) };
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 404) return undefined;
      throw err;
    }
  }

  async write(functionName: string, status: ScheduleStatus): Promise<void> {
    this.created ??= this.service.getContainerClient('azure-webjobs-hosts').createIfNotExists();
    await this.created;
    const body = JSON.stringify({ Last: iso(status.last), Next: iso(status.next), LastUpdated: iso(status.lastUpdated) });
    await this.blob(functionName).upload(body, Buffer.byteLength(body));
  }
}

export interface TimerListenerOptions {
  readonly fn: FunctionMetadata;
  readonly triggerName: string;
  readonly schedule: Schedule;
  readonly runOnStartup: boolean;
  readonly useMonitor: boolean;
  readonly clock: HostClock;
  readonly invoker: Invoker;
  readonly store: TimerStatusStore;
  readonly log: HostLogger;
  /** Non-trigger inputs (e.g. a durable client) for each invocation. */
  readonly extraInputs: () => Promise<RpcParameterBinding[]>;
}

export class TimerListener {
  private cancel: (() => void) | undefined;
  private running = false;
  private busy = 0;
  private pendingStart = false;
  private status: ScheduleStatus = { last: undefined, next: undefined, lastUpdated: undefined };

  constructor(private readonly options: TimerListenerOptions) {}

  get functionName(): string {
    return this.options.fn.name;
  }

  idle(): boolean {
    return this.busy === 0 && !this.pendingStart;
  }

  async start(): Promise<void> {
    const { clock, store, useMonitor, runOnStartup, log } = this.options;
    this.running = true;
    const now = clock.now();
    let stored: ScheduleStatus | undefined;
    if (useMonitor) {
      try {
        stored = await store.read(this.functionName);
      } catch (err) {
        log(
          'warn',
          `Timer '${this.functionName}': could not read its schedule status (${err instanceof Error ? err.message : String(err)}); isPastDue detection after downtime is off`,
        );
      }
    }
    if (stored !== undefined) this.status = stored;
    if (stored?.next !== undefined && stored.next < now) {
      log('info', `Function '${this.functionName}' is past due on startup (was due ${iso(stored.next)}). Executing now.`);
      this.fireSoon(stored.next, true);
    } else if (runOnStartup) {
      this.fireSoon(now, false);
    } else {
      this.arm(now);
    }
  }

  stop(): void {
    this.running = false;
    this.pendingStart = false;
    this.cancel?.();
    this.cancel = undefined;
  }

  /** The next scheduled occurrence, if armed. */
  get nextOccurrence(): number | undefined {
    return this.status.next;
  }

  private fireSoon(scheduledAt: number, pastDue: boolean): void {
    this.pendingStart = true;
    this.cancel = this.options.clock.schedule(this.options.clock.now(), () => {
      this.pendingStart = false;
      void this.fire(scheduledAt, pastDue);
    });
  }

  private arm(after: number): void {
    if (!this.running) return;
    const next = this.options.schedule.next(after);
    if (next === undefined) return;
    this.status = { ...this.status, next };
    this.cancel = this.options.clock.schedule(next, () => void this.fire(next, false));
  }

  /** One invocation; an input binding that fails fails it before the function runs, as on the host. */
  private async invoke(timerInfo: unknown): Promise<InvocationOutcome> {
    let extra: RpcParameterBinding[];
    try {
      extra = await this.options.extraInputs();
    } catch (err) {
      return failedBeforeRun(err);
    }
    const inputData: RpcParameterBinding[] = [{ name: this.options.triggerName, data: { json: JSON.stringify(timerInfo) } }, ...extra];
    return this.options.invoker.invoke({ functionName: this.functionName, inputData, triggerMetadata: {} });
  }

  /** Runs the function once (admin "run now", runOnStartup, a due occurrence). */
  async fire(scheduledAt: number, pastDue: boolean): Promise<void> {
    const { clock, schedule, log } = this.options;
    if (!this.running) return;
    this.busy++;
    try {
      const firedAt = clock.now();
      const isPastDue = pastDue || firedAt - scheduledAt > pastDueToleranceMs;
      const next = schedule.next(firedAt);
      const timerInfo = {
        Schedule: { AdjustForDST: true },
        ScheduleStatus: { Last: iso(this.status.last), Next: iso(next), LastUpdated: iso(this.status.lastUpdated ?? firedAt) },
        IsPastDue: isPastDue,
      };
      const outcome = await this.invoke(timerInfo);
      if (!outcome.ok)
        log(
          'error',
          `Executed 'Functions.${this.functionName}' (Failed, Id=${outcome.invocationId}): ${outcome.error.stack ?? outcome.error.message}`,
        );
      else
        log(
          'info',
          `Executed 'Functions.${this.functionName}' (Succeeded, Id=${outcome.invocationId}, Duration=${Math.round(outcome.durationMs)}ms)`,
        );
      const now = clock.now();
      this.status = { last: scheduledAt, next: schedule.next(now), lastUpdated: now };
      if (this.options.useMonitor) {
        await this.options.store.write(this.functionName, this.status).catch((err: unknown) => {
          log(
            'warn',
            `Timer '${this.functionName}': could not save its schedule status: ${err instanceof Error ? err.message : String(err)}`,
          );
        });
      }
      this.arm(now);
    } finally {
      this.busy--;
    }
  }
}
