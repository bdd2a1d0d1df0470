/**
 * Group commit on the sending side. Each writer gets at most one append signal in flight from this
 * instance; requests that arrive meanwhile wait and then go together in the next signal (one message,
 * one entity step, one ledger report for all of them). With one request at a time nothing waits;
 * under load, concurrent producers share the durable round trips instead of queueing behind them.
 */
import type { DurableClient } from '../durable/client';
import { writerEntity, writerOps } from './names';
import type { AppendOperation, AppendRequest } from './writerState';

interface Pending {
  readonly request: AppendRequest;
  readonly size: number;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

interface Lane {
  durable: DurableClient;
  readonly pending: Pending[];
  sending: boolean;
}

export class AppendCoalescer {
  private readonly lanes = new Map<string, Lane>();
  /** Signals sent and requests carried, for tests and the bench. */
  readonly stats = { signals: 0, requests: 0 };

  /** @param maxSignalBytes Requests are merged up to about this much JSON per signal. */
  constructor(private readonly maxSignalBytes = 512 * 1024) {}

  /** Resolves once the signal carrying `request` is durably queued for the writer `key`. */
  send(durable: DurableClient, key: string, request: AppendRequest): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let lane = this.lanes.get(key);
      if (lane === undefined) {
        lane = { durable, pending: [], sending: false };
        this.lanes.set(key, lane);
      }
      lane.durable = durable;
      lane.pending.push({ request, size: JSON.stringify(request).length, resolve, reject });
      if (!lane.sending) void this.drain(key, lane);
    });
  }

  private async drain(key: string, lane: Lane): Promise<void> {
    lane.sending = true;
    while (lane.pending.length > 0) {
      const batch: Pending[] = [];
      let size = 0;
      while (lane.pending.length > 0) {
        const next = lane.pending[0] as Pending;
        if (batch.length > 0 && size + next.size > this.maxSignalBytes) break;
        batch.push(next);
        size += next.size;
        lane.pending.shift();
      }
      const operation: AppendOperation = { requests: batch.map((p) => p.request) };
      try {
        await lane.durable.signal(writerEntity(key), writerOps.append, operation);
        this.stats.signals++;
        this.stats.requests += batch.length;
        for (const p of batch) p.resolve();
      } catch (err) {
        for (const p of batch) p.reject(err);
      }
    }
    lane.sending = false;
    this.lanes.delete(key);
  }
}
