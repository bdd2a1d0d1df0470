/**
 * Waiting for a writer's answer. Out of process a client cannot call an entity, so a caller signals
 * the writer and then watches the writer's ledger. One poller per writer per process serves every
 * waiting request (16 producers waiting on one writer cost one read per poll, not 16), with a delay
 * that starts small and doubles while nothing changes.
 */
import type { Clock } from '../clock';
import type { Logger } from '../log';
import type { DurableClient } from '../durable/client';
import type { LedgerState } from './ledger';
import { ledgerEntity } from './names';

export interface WatchTiming {
  /** First delay between reads, and the delay after a read that saw a change. */
  readonly minDelayMs: number;
  /** Longest delay between reads. */
  readonly maxDelayMs: number;
}

const defaultWatchTiming: WatchTiming = { minDelayMs: 10, maxDelayMs: 100 };

export type WatchResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly ledger: LedgerState | undefined };

interface Waiter {
  readonly check: (ledger: LedgerState) => unknown;
  readonly deadline: number;
  readonly settle: (result: WatchResult<unknown>) => void;
}

interface Watch {
  readonly waiters: Set<Waiter>;
  durable: DurableClient;
  delay: number;
}

export class LedgerWatch {
  private readonly watches = new Map<string, Watch>();

  constructor(
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly timing: WatchTiming = defaultWatchTiming,
  ) {}

  /** Reads the ledger once (undefined when the writer never reported). */
  async read(durable: DurableClient, key: string): Promise<LedgerState | undefined> {
    return durable.readState<LedgerState>(ledgerEntity(key));
  }

  /**
   * Resolves with the first non-undefined value `check` returns for the writer's ledger, or with
   * `ok: false` (and the last ledger seen) once `deadline` (clock time) has passed.
   */
  wait<T>(durable: DurableClient, key: string, check: (ledger: LedgerState) => T | undefined, deadline: number): Promise<WatchResult<T>> {
    return new Promise<WatchResult<T>>((resolve) => {
      const waiter: Waiter = { check, deadline, settle: resolve as (result: WatchResult<unknown>) => void };
      let watch = this.watches.get(key);
      if (watch === undefined) {
        watch = { waiters: new Set(), durable, delay: this.timing.minDelayMs };
        this.watches.set(key, watch);
        watch.waiters.add(waiter);
        void this.poll(key, watch);
      } else {
        watch.durable = durable;
        watch.delay = this.timing.minDelayMs;
        watch.waiters.add(waiter);
      }
    });
  }

  private async poll(key: string, watch: Watch): Promise<void> {
    let lastSeen = '';
    let ledger: LedgerState | undefined;
    while (watch.waiters.size > 0) {
      try {
        ledger = await this.read(watch.durable, key);
      } catch (err) {
        this.logger.log('warn', 'streams.ledger_read_failed', { writer: key, error: err });
      }
      const now = this.clock.now();
      for (const waiter of [...watch.waiters]) {
        const value = ledger === undefined ? undefined : waiter.check(ledger);
        if (value !== undefined) {
          watch.waiters.delete(waiter);
          waiter.settle({ ok: true, value });
        } else if (now >= waiter.deadline) {
          watch.waiters.delete(waiter);
          waiter.settle({ ok: false, ledger });
        }
      }
      // Poll fast while the writer is busy, back off while it is quiet.
      const seen = `${ledger?.snapshot?.rev ?? -1}/${ledger?.receipts[ledger.receipts.length - 1]?.r ?? ''}`;
      watch.delay = seen !== lastSeen ? this.timing.minDelayMs : Math.min(this.timing.maxDelayMs, watch.delay * 2);
      lastSeen = seen;
      if (watch.waiters.size > 0) await this.clock.sleep(watch.delay);
    }
    this.watches.delete(key);
  }
}
