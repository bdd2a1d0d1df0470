/**
 * A release's actions, fanned out at once by the instance that made the release. Through Durable,
 * the release orchestration's batches were activities that started one after another as the
 * extension took them off its work-item queue (on the real host, over 0.1–5.6 s for 16 batches of a
 * 1,000-run release; bench/gates.ts prints that breakdown); here every shard range starts at once,
 * right after the release is written, so the queue gets as many sends at a time as it takes.
 *
 * Cross-instance and crash behaviour: what this holds in memory is only the fan-outs under way. The
 * release orchestration (started before the release was written) sweeps the same runs after a grace
 * (`fanOutGraceSeconds`): what a killed or failed fan-out left pending, it performs; what was done is
 * recorded already and skipped. Every outcome is recorded with If-Match on the run row, so once
 * however many perform the action; the action itself stays at least once (a run sent but not yet
 * recorded when the sweep reads it is sent again, as a retried activity would).
 */
import type { Logger } from '../log';
import { type ActionDeps, performActionBatch } from './actionRunner';
import type { ActionBatchResult } from './messages';
import { shardGroups } from './release.orchestrator';

/** A release just written, with runs whose actions it let go. */
export interface FanOutInput {
  readonly gate: string;
  readonly generation: number;
  /** The first generation the release let go. */
  readonly from: number;
  /** Runs with an action it let go (as the caller read the gate): how many shard ranges run at once. */
  readonly actions: number;
  readonly batchSize: number;
  readonly trace?: string;
}

export class ReleaseFanOut {
  private readonly underWay = new Set<Promise<void>>();

  constructor(
    private readonly deps: ActionDeps,
    private readonly logger: Logger,
  ) {}

  /** Starts the fan-out and returns at once: the caller's answer does not wait for the actions. */
  start(input: FanOutInput): void {
    const run: Promise<void> = this.run(input).finally(() => this.underWay.delete(run));
    this.underWay.add(run);
  }

  /** Resolves once every fan-out this instance started has ended (tests; nothing is thrown). */
  async settled(): Promise<void> {
    while (this.underWay.size > 0) await Promise.all([...this.underWay]);
  }

  private async run(input: FanOutInput): Promise<void> {
    const { gate, generation, from, trace } = input;
    const started = this.deps.now();
    try {
      const results: ActionBatchResult[] = await Promise.all(
        shardGroups(input.actions, input.batchSize).map((shards) =>
          performActionBatch(this.deps, {
            gate,
            generation,
            selection: { kind: 'released', shards, from },
            ...(trace === undefined ? {} : { trace }),
          }),
        ),
      );
      const sum = (key: 'done' | 'failed' | 'retry'): number => results.reduce((n, r) => n + r[key], 0);
      this.logger.log('info', 'gates.fanout.done', {
        gate,
        generation,
        done: sum('done'),
        failed: sum('failed'),
        retry: sum('retry'),
        ms: this.deps.now() - started,
      });
    } catch (err) {
      // The release orchestration's sweep performs what is left.
      this.logger.log('warn', 'gates.fanout.failed', { gate, generation, error: err });
    }
  }
}
