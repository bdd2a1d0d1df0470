/**
 * Waking a writer's flusher. The flusher is an eternal orchestration with a fixed instance id per
 * writer, started on first need; entities cannot raise events to orchestrations, so the caller whose
 * append made a flush necessary (receipt `kick`) raises it. A process trusts that a flusher it saw
 * running is still running for a while, so a kick usually costs one request.
 */
import type { Clock } from '../clock';
import { type DurableClient, isLive } from '../durable/client';
import { startSingleton } from '../durable/singleton';
import type { Logger } from '../log';
import type { FlusherInput } from './flusher.orchestrator';
import { flusherInstanceId, streamsDurable } from './names';

/** How long `restart` waits, at most, for a retiring flusher to finish (it ends right after retiring). */
const retireWaitMs = 100;
const retireWaitAttempts = 30;

/** Writers whose flusher this process remembers as running; expired entries are dropped past it. */
const maxTrusted = 1000;

export class FlusherControl {
  private readonly runningUntil = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly trustMs = 60_000,
  ) {}

  private trust(key: string): void {
    const now = this.clock.now();
    if (this.runningUntil.size >= maxTrusted) {
      for (const [k, until] of this.runningUntil) if (until <= now) this.runningUntil.delete(k);
      // All still fresh: forget the oldest; the cost is one status read when it is next kicked.
      if (this.runningUntil.size >= maxTrusted) this.runningUntil.delete(this.runningUntil.keys().next().value ?? key);
    }
    this.runningUntil.set(key, now + this.trustMs);
  }

  /** Starts the writer's flusher unless it runs; true when it was started here. */
  async ensureRunning(durable: DurableClient, key: string): Promise<boolean> {
    if ((this.runningUntil.get(key) ?? 0) > this.clock.now()) return false;
    const id = flusherInstanceId(key);
    const status = await durable.getStatus(id);
    let started = false;
    // Read first: a live flusher is the common case, and a start would replace a finished one anyway.
    if (!isLive(status)) {
      const input: FlusherInput = { key };
      // Another instance may start it between our read and our start: that is what we wanted.
      started = (await startSingleton(durable, streamsDurable.flusher, id, input)) === 'started';
      if (started) this.logger.log('info', 'streams.flusher_started', { writer: key, previousStatus: status?.runtimeStatus ?? 'none' });
    }
    this.trust(key);
    return started;
  }

  /**
   * Starts a new flusher for a writer whose flusher retired while idle (receipt `restart`): waits
   * briefly for the retiring instance to finish, since an event raised to it would be lost.
   */
  async restart(durable: DurableClient, key: string): Promise<void> {
    this.runningUntil.delete(key);
    const id = flusherInstanceId(key);
    for (let attempt = 0; attempt < retireWaitAttempts; attempt++) {
      const status = await durable.getStatus(id).catch(() => undefined);
      if (!isLive(status)) break;
      await this.clock.sleep(retireWaitMs);
    }
    await this.kick(durable, key);
  }

  /**
   * Wakes the flusher. Never throws: the events are durable in the writer already, and the flusher
   * looks at its writer on its own within TALLYHO_STREAMS_IDLE_RECHECK_SECONDS anyway.
   */
  async kick(durable: DurableClient, key: string): Promise<void> {
    try {
      if (await this.ensureRunning(durable, key)) return; // a fresh flusher plans at once
      const outcome = await durable.raiseEvent(flusherInstanceId(key), streamsDurable.kickEvent, { at: this.clock.now() });
      if (outcome === 'gone') {
        this.runningUntil.delete(key);
        await this.ensureRunning(durable, key);
      }
    } catch (err) {
      this.runningUntil.delete(key);
      this.logger.log('warn', 'streams.kick_failed', { writer: key, error: err });
    }
  }
}
