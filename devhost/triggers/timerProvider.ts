/**
 * Timer triggers as a provider: one TimerListener per timer function, on the host clock, with the
 * schedule status kept in blob storage for monitored schedules (timerTrigger.ts says how).
 */
import { getSetting, type Settings } from '../app/settings';
import type { HostClock } from '../clock';
import type { FunctionMetadata } from '../core/types';
import { bindingOfType, flag, text } from '../core/values';
import { functionLogger } from '../app/logLevels';
import type { HostLogger } from '../log';
import type { HostProvider, HostServices } from '../provider';
import { parseSchedule, validateTimeZone } from './schedule';
import { BlobTimerStatusStore, MemoryTimerStatusStore, TimerListener, type TimerStatusStore } from './timerTrigger';

/**
 * WEBSITE_TIME_ZONE must name an IANA zone. TZ is often set for other reasons (e.g. `:/etc/localtime`),
 * so a TZ that is not an IANA name is ignored with a warning rather than stopping the host.
 */
function timerTimeZone(settings: Settings, log: HostLogger): string {
  const website = getSetting(settings, 'WEBSITE_TIME_ZONE')?.trim();
  if (website !== undefined && website !== '') return validateTimeZone(website);
  const tz = getSetting(settings, 'TZ')?.trim();
  if (tz === undefined || tz === '') return 'Etc/UTC';
  try {
    return validateTimeZone(tz);
  } catch {
    log('warn', `TZ is "${tz}", not an IANA time zone name: timer schedules run in UTC`);
    return 'Etc/UTC';
  }
}

export class TimerProvider implements HostProvider {
  readonly name = 'timers';
  readonly bindingTypes = ['timerTrigger'];
  private listeners: TimerListener[] = [];
  private clock: HostClock | undefined;

  async start(host: HostServices): Promise<void> {
    this.clock = host.clock;
    const timeZone = timerTimeZone(host.settings, host.log);
    let statusStore: TimerStatusStore | undefined;
    const blobStore = (): TimerStatusStore => {
      if (statusStore !== undefined) return statusStore;
      try {
        statusStore = new BlobTimerStatusStore(host.storage.blobService(undefined), host.hostId);
      } catch {
        host.log('warn', 'AzureWebJobsStorage is not set: timer schedule status is kept in memory only (no isPastDue after downtime)');
        statusStore = new MemoryTimerStatusStore();
      }
      return statusStore;
    };
    for (const fn of host.functions) {
      const found = bindingOfType(fn, 'timerTrigger');
      if (found === undefined) continue;
      const [triggerName, trigger] = found;
      const schedule = parseSchedule(text(trigger.schedule), timeZone);
      const useMonitor = trigger.useMonitor === undefined ? schedule.minIntervalMs >= 60_000 : flag(trigger.useMonitor);
      this.listeners.push(
        new TimerListener({
          fn,
          triggerName,
          schedule,
          runOnStartup: flag(trigger.runOnStartup),
          useMonitor,
          clock: host.clock,
          invoker: host.invoker,
          store: useMonitor ? blobStore() : new MemoryTimerStatusStore(),
          // The invocation's own lines follow host.json's level for `Function.<name>`, as on the real host.
          log: functionLogger(host.log, host.config.json, fn.name),
          extraInputs: () => host.bindings.inputData(fn, {}),
        }),
      );
    }
    for (const listener of this.listeners) await listener.start();
  }

  pause(): Promise<void> {
    for (const listener of this.listeners) listener.stop();
    return Promise.resolve();
  }

  stop(): Promise<void> {
    return this.pause();
  }

  describe(fn: FunctionMetadata): string | undefined {
    const trigger = bindingOfType(fn, 'timerTrigger')?.[1];
    if (trigger === undefined) return undefined;
    return `timerTrigger (schedule: ${text(trigger.schedule)}${trigger.runOnStartup === true ? ', runOnStartup' : ''})`;
  }

  idle(): boolean {
    return this.listeners.every((l) => l.idle());
  }

  /** Fires the timer once now (its input is ignored, as the real admin API ignores it). */
  runNow(functionName: string): boolean {
    const listener = this.listeners.find((l) => l.functionName === functionName);
    if (listener === undefined || this.clock === undefined) return false;
    void listener.fire(this.clock.now(), false);
    return true;
  }
}
