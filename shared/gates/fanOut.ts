/**
 * A release's actions, fanned out at once by the instance that made the release. Through Durable,
 * the release orchestration's batches were activities that started one after another as the
 * extension took them off its work-item queue (on the real host, over 0.1–5.6 s for the 16 batches
 * of a 1,000-run release; bench/gates.ts prints that breakdown) and each read its own key range;
 * here one query reads the pending runs page by page and every run goes into one pool of sends, as
 * many at a time as the queue takes, each outcome recorded as soon as 100 are ready.
 *
 * Cross-instance and crash behaviour: what this holds in memory is only the fan-outs under way. Each
 * holds a lease, a row written with the release and renewed while it works (`fanOutLeaseSeconds`),
 * marked ended when it is done. The release orchestration (started before the release was written)
 * sweeps the same runs once that lease ended or lapsed: what a killed or failed fan-out left pending,
 * it performs; what was done is recorded already and skipped; after a clean end it only looks. Every
 * outcome is recorded with If-Match on the run row, so once however many perform the action; the
 * action itself stays at least once (a run sent but not yet recorded when the sweep reads it is sent
 * again, as a retried activity would — now only after a fan-out stopped renewing).
 */
import { isAppError } from '../errors';
import { InFlight } from '../inFlight';
import type { Logger } from '../log';
import { noTelemetry } from '../telemetry/port';
import { type ActionDeps, attempt, batchTiming } from './actionRunner';
import { gateTelemetry } from './metrics';
import { fanOutLeaseSeconds, runShards } from './names';
import type { FanOutLease } from './rows';
import type { ActionOutcome } from './operations';
import { type GateStore, maxTransactionOperations, type StoredRun } from './store';

/**
 * Sends one instance's fan-out has under way: what the release orchestration's 16 batches had at
 * most (16 × 8), and what the bench's queue-alone baseline sends at a time.
 */
const fanOutConcurrency = 128;

/** A fan-out's lease as written with the release and at each renewal: running for `fanOutLeaseSeconds` from `now`. */
export function runningLease(now: number): FanOutLease {
  return { state: 'running', until: new Date(now + fanOutLeaseSeconds * 1000).toISOString() };
}

/** A release just written, with runs whose actions it let go. */
export interface FanOutInput {
  readonly gate: string;
  readonly generation: number;
  /** The first generation the release let go. */
  readonly from: number;
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
    const run: Promise<void> = this.traced(input).finally(() => this.underWay.delete(run));
    this.underWay.add(run);
  }

  /** Resolves once every fan-out this instance started has ended (tests; nothing is thrown). */
  async settled(): Promise<void> {
    while (this.underWay.size > 0) await Promise.all([...this.underWay]);
  }

  /** In the action-batch span, continuing the release's trace. */
  private traced(input: FanOutInput): Promise<void> {
    const { spans } = (this.deps.telemetry ?? noTelemetry).of(gateTelemetry);
    const attributes = { 'tallyho.gate.name': input.gate, 'tallyho.gate.generation': String(input.generation) };
    return spans.actions.run({ attributes, ...(input.trace === undefined ? {} : { parent: input.trace }) }, () => this.run(input));
  }

  private async run(input: FanOutInput): Promise<void> {
    const { gate, generation } = input;
    const progress = { steps: 0 };
    const lease = this.lease(gate, generation, progress);
    const { counts, failure, marks } = await this.fanOut(input, progress);
    lease.end(failure === undefined && counts.retry === 0);
    await lease.written();
    if (failure === undefined) this.logger.log('info', 'gates.fanout.done', { gate, generation, ...counts, ...marks });
    // The release orchestration's sweep performs (and records) what is left.
    else this.logger.log('warn', 'gates.fanout.failed', { gate, generation, ...counts, error: failure });
  }

  /**
   * Renews the lease written with the release every third of its length while the fan-out moves (a
   * page read, a send or a write of outcomes ended since the last renewal: one stuck on a send that
   * never answers lets it lapse), until `end` marks it ended. One write at a time, in order; a failed
   * write is logged and the next one tried (a lease that lapses only lets the sweep start early:
   * actions stay at least once and are recorded once).
   */
  private lease(
    gate: string,
    generation: number,
    progress: { readonly steps: number },
  ): { end(clean: boolean): void; written(): Promise<void> } {
    const { store, now } = this.deps;
    let writes: Promise<void> = Promise.resolve();
    const write = (lease: () => FanOutLease): void => {
      writes = writes.then(() =>
        store.writeFanOut(gate, generation, lease()).catch((err: unknown) => {
          this.logger.log('warn', 'gates.fanout.leaseWriteFailed', { gate, generation, error: err });
        }),
      );
    };
    let renewedAt = 0;
    const renewal = setInterval(
      () => {
        if (progress.steps === renewedAt) return;
        renewedAt = progress.steps;
        write(() => runningLease(now()));
      },
      (fanOutLeaseSeconds * 1000) / 3,
    );
    renewal.unref();
    return {
      end: (clean) => {
        clearInterval(renewal);
        write(() => ({ state: 'ended', at: new Date(now()).toISOString(), clean }));
      },
      written: () => writes,
    };
  }

  /** Sends every pending run's action and records the outcomes; what failed is reported, never thrown. */
  private async fanOut(
    input: FanOutInput,
    progress: { steps: number },
  ): Promise<{ counts: Record<'done' | 'failed' | 'retry', number>; failure: unknown; marks: Record<string, number> }> {
    const { gate, generation, from } = input;
    const { store } = this.deps;
    const timing = batchTiming(this.deps.now);
    const counts = { done: 0, failed: 0, retry: 0 };
    let ready: { run: StoredRun; outcome: ActionOutcome }[] = [];
    let failure: unknown;
    // One write of outcomes at a time, each tried again while storage says it may cure: writes racing
    // the sends timed out on a loaded store and left thousands to the sweep (sent twice).
    let recording: Promise<unknown> = Promise.resolve();
    const record = (): void => {
      const chunk = ready;
      ready = [];
      // Never rejected (an early exit must leave nothing unhandled): a failure is kept and reported.
      if (chunk.length > 0)
        recording = recording
          .then(() => recordPatiently(store, gate, chunk))
          .then(
            () => {
              progress.steps++;
              timing.mark('recorded');
            },
            (err: unknown) => (failure ??= err),
          );
    };
    const sending = new InFlight();
    try {
      for await (const page of store.pendingActions(gate, { shards: [0, runShards], from, to: generation })) {
        timing.first('read');
        progress.steps++;
        for (const run of page) {
          while (sending.size >= fanOutConcurrency) await sending.next();
          sending.add(
            attempt(this.deps, gate, generation, run).then(
              (tried) => {
                progress.steps++;
                timing.first('sent');
                timing.mark('performed');
                if ('retry' in tried) return void counts.retry++;
                counts[tried.outcome.state === 'done' ? 'done' : 'failed']++;
                ready.push({ run, outcome: tried.outcome });
                if (ready.length >= maxTransactionOperations) record();
              },
              (err: unknown) => {
                progress.steps++;
                counts.retry++;
                failure ??= err;
              },
            ),
          );
        }
      }
      await sending.settled();
      record();
      await recording;
    } catch (err) {
      failure ??= err;
    }
    return { counts, failure, marks: timing.marks() };
  }
}

const recordDelaysMs = [500, 1000, 2000, 4000] as const;

/** Records a chunk of outcomes, again after a pause while the failure is one a retry may cure (a repeat of a write that landed records nothing). */
async function recordPatiently(store: GateStore, gate: string, chunk: Parameters<GateStore['recordOutcomes']>[1]): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await store.recordOutcomes(gate, chunk);
      return;
    } catch (err) {
      const delay = recordDelaysMs[attempt];
      if (delay === undefined || !isAppError(err) || !err.retryable) throw err;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
