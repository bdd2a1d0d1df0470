/**
 * Storage-queue triggers as a provider: one QueueListener per queue function, with host.json
 * `extensions.queues` (queueTrigger.ts says how they poll). A write to a queue this host listens on,
 * through an output binding, wakes that listener at once, as the real host's shared queue watcher does.
 */
import type { HostClock } from '../clock';
import type { FunctionMetadata } from '../core/types';
import { bindingOfType, text } from '../core/values';
import type { HostProvider, HostServices } from '../provider';
import { QueueListener } from './queueTrigger';

/** How long a stop waits for messages under way to be settled (deleted, released or poisoned). */
const settleMs = 2000;

export class QueueProvider implements HostProvider {
  readonly name = 'queues';
  readonly bindingTypes = ['queueTrigger'];
  private listeners: QueueListener[] = [];
  private clock: HostClock | undefined;

  async start(host: HostServices): Promise<void> {
    this.clock = host.clock;
    for (const fn of host.functions) {
      const found = bindingOfType(fn, 'queueTrigger');
      if (found === undefined) continue;
      const [triggerName, trigger] = found;
      const connection = typeof trigger.connection === 'string' ? trigger.connection : undefined;
      const queueName = text(trigger.queueName).toLowerCase();
      this.listeners.push(
        new QueueListener({
          fn,
          triggerName,
          queueName,
          queue: await host.storage.queue(connection, queueName),
          poison: () => host.storage.queue(connection, `${queueName}-poison`),
          settings: host.config.queues,
          invoker: host.invoker,
          bindings: host.bindings,
          log: host.log,
        }),
      );
    }
    for (const listener of this.listeners) listener.start();
  }

  /** Something was written to `queueName`: its listeners poll now. */
  notify(queueName: string): void {
    for (const listener of this.listeners) if (listener.queueName === queueName) listener.notify();
  }

  /** Stops polling; messages under way go on. */
  async pause(): Promise<void> {
    await Promise.all(this.listeners.map((l) => l.stop()));
  }

  async stop(): Promise<void> {
    await this.pause();
    await Promise.race([Promise.all(this.listeners.map((l) => l.finished())), new Promise((r) => setTimeout(r, settleMs))]);
  }

  describe(fn: FunctionMetadata): string | undefined {
    const trigger = bindingOfType(fn, 'queueTrigger')?.[1];
    return trigger === undefined ? undefined : `queueTrigger (queue: ${text(trigger.queueName)})`;
  }

  /** Runs the function once on `input` as a fresh message (nothing is read from the queue). */
  runNow(functionName: string, input: string | undefined): boolean {
    const listener = this.listeners.find((l) => l.functionName === functionName);
    if (listener === undefined || this.clock === undefined) return false;
    void listener.runOnce(input ?? '', this.clock.now());
    return true;
  }
}
