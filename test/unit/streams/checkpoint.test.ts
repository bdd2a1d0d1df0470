/**
 * The writer entity under the Durable Azure Storage provider's checkpoint rule: a work item (one
 * entity batch, one function invocation) sends its outgoing messages BEFORE it stores the entity's
 * new state (DurableTask.AzureStorage `AzureStorageOrchestrationService.CompleteTaskOrchestrationWorkItemAsync`:
 * "First, add new messages into the queue. If a failure happens after this, duplicate messages will
 * be written after the retry"). An instance killed between the two leaves the messages delivered
 * and the state unwritten; the messages it had taken come back after the visibility timeout, while
 * newer ones are processed first. These tests run `streamWriterEntity` batch by batch the way the
 * durable-functions SDK does (one invocation, one `invocationId`, per batch; `Entity.handle` loops
 * over the batch's operations) and drop a batch's checkpoint where a kill would.
 */
import type { EntityContext } from 'durable-functions';

import type { LedgerReport } from '../../../shared/streams/ledger';
import { writerOps } from '../../../shared/streams/names';
import { streamWriterEntity } from '../../../shared/streams/writer.entity';
import type { AppendOperation, AppendRequest, FlushPlan, Receipt, WriterState } from '../../../shared/streams/writerState';
import { opened0, request } from './fixtures';

const key = 'p00:orders';

interface Sent {
  readonly to: string;
  readonly operation: string;
  readonly input: unknown;
}

interface Op {
  readonly name: string;
  readonly input: unknown;
}

interface Batch {
  /** The state the batch would store; a test that models a kill throws it away. */
  readonly state: WriterState;
  /** Every message the batch sent, already delivered whatever happens to its checkpoint. */
  readonly sent: readonly Sent[];
  readonly results: readonly unknown[];
}

let invocations = 0;

/** One entity batch: the SDK's loop over the operations with one context and one invocation id. */
function runBatch(stored: WriterState, ops: readonly Op[]): Batch {
  const invocationId = `invocation-${++invocations}`;
  let text = JSON.stringify(stored);
  const sent: Sent[] = [];
  const results: unknown[] = [];
  for (const op of ops) {
    const df = {
      entityKey: key,
      operationName: op.name,
      getState: (): WriterState => JSON.parse(text) as WriterState,
      setState: (state: WriterState): void => void (text = JSON.stringify(state)),
      getInput: (): unknown => op.input,
      return: (value: unknown): void => void results.push(value),
      signalEntity: (id: { toString(): string }, operation: string, input: unknown): void =>
        void sent.push({ to: id.toString(), operation, input: JSON.parse(JSON.stringify(input)) as unknown }),
    };
    streamWriterEntity({ invocationId, df } as unknown as EntityContext<WriterState>);
  }
  return { state: JSON.parse(text) as WriterState, sent, results };
}

const appendOp = (...requests: AppendRequest[]): Op => ({ name: writerOps.append, input: { requests } satisfies AppendOperation });

/** The receipts a batch's ledger reports carried: what callers can see. */
function receiptsSeen(batch: Batch): Receipt[] {
  return batch.sent.filter((s) => s.to === `@streamledger@${key}`).flatMap((s) => (s.input as LedgerReport).receipts ?? []);
}

/** The writer's own follow-up messages, delivered to it as the next batch would be. */
function selfSignals(batch: Batch): Op[] {
  return batch.sent.filter((s) => s.to === `@streamwriter@${key}`).map((s) => ({ name: s.operation, input: s.input }));
}

/** `producer/seq` of every event the state holds (buffer and in-flight batch). */
function held(state: WriterState): Set<string> {
  const text = `${state.inflight?.text ?? ''}${state.buffer}`;
  const lines = text.split('\n').filter((l) => l !== '');
  return new Set(lines.map((l) => JSON.parse(l) as { producer: string; seq: number }).map((e) => `${e.producer}/${e.seq}`));
}

describe('stream writer receipts under the provider checkpoint rule', () => {
  it('acknowledges nothing whose checkpoint can still be lost: an acknowledged event survives the kill of its batch', () => {
    const stored = opened0();
    const a = request([
      { producer: 'p', seq: 1 },
      { producer: 'p', seq: 2 },
    ]);
    // The batch that accepts A sends its messages, then its instance is killed: its state is never stored.
    const lost = runBatch(stored, [appendOp(a)]);
    const seenFromLost = receiptsSeen(lost).filter((r) => r.r === a.requestId && r.ok);
    // What the producer does next: with A acknowledged it sends its next events; without, it sends A again.
    const next = seenFromLost.length > 0 ? request([{ producer: 'p', seq: 3 }]) : request(a.events.slice());
    // The new owner of the partition: the writer's follow-ups from the lost batch, the producer's
    // next request, and only after the visibility timeout the original A again.
    let state = stored;
    const seen: Receipt[] = [...seenFromLost];
    for (const ops of [selfSignals(lost), [appendOp(next)], [appendOp(a)]]) {
      let batch = runBatch(state, ops);
      seen.push(...receiptsSeen(batch));
      state = batch.state;
      // Follow-ups run as later batches, each stored.
      for (let follow = selfSignals(batch); follow.length > 0; follow = selfSignals(batch)) {
        batch = runBatch(state, follow);
        seen.push(...receiptsSeen(batch));
        state = batch.state;
      }
    }
    const acknowledged = [a, next].filter((r) => seen.some((s) => s.r === r.requestId && s.ok));
    expect(acknowledged.length).toBeGreaterThan(0);
    for (const r of acknowledged) for (const e of r.events) expect(held(state)).toContain(`${e.producer}/${e.seq}`);
  });

  it('answers an append only from a later batch, once the state holding its events was stored', () => {
    const a = request([{ producer: 'p', seq: 1 }]);
    const first = runBatch(opened0(), [appendOp(a)]);
    expect(receiptsSeen(first)).toEqual([]);
    expect(selfSignals(first)).toHaveLength(1);
    const second = runBatch(first.state, selfSignals(first));
    expect(receiptsSeen(second)).toEqual([expect.objectContaining({ r: a.requestId, ok: true, acc: 1, last: 0 })]);
    // Released once: a repeated follow-up finds nothing more to say.
    const third = runBatch(second.state, selfSignals(first));
    expect(receiptsSeen(third)).toEqual([]);
    expect(third.state.rev).toBe(second.state.rev);
  });

  it('lets any later batch answer, and asks for one follow-up per batch however many appends it holds', () => {
    const a = request([{ producer: 'p', seq: 1 }]);
    const b = request([{ producer: 'q', seq: 1 }]);
    const c = request([{ producer: 'r', seq: 1 }]);
    const first = runBatch(opened0(), [appendOp(a), appendOp(b)]);
    expect(selfSignals(first)).toHaveLength(1);
    // The next batch is another append: it answers the earlier two and holds its own.
    const second = runBatch(first.state, [appendOp(c)]);
    expect(receiptsSeen(second).map((r) => r.r)).toEqual([a.requestId, b.requestId]);
    const third = runBatch(second.state, selfSignals(second));
    expect(receiptsSeen(third).map((r) => r.r)).toEqual([c.requestId]);
  });

  it('hands the flusher only a batch taken by an earlier, stored step, so a retried flush writes the same bytes', () => {
    const a = request([{ producer: 'p', seq: 1 }]);
    const appended = runBatch(opened0(), [appendOp(a)]).state;
    const planOp: Op = { name: writerOps.plan, input: { now: 0 } };
    // A flush is asked for (explicit), so the buffer is due at once.
    const due = runBatch(appended, [{ name: writerOps.requestFlush, input: { requestId: 'f1' } }]).state;
    const taking = runBatch(due, [planOp]);
    expect(taking.results).toEqual([{ kind: 'taken' } satisfies FlushPlan]);
    // Two plans in one batch (a redelivered one beside the current one): still not handed out.
    const both = runBatch(due, [planOp, planOp]);
    expect(both.results).toEqual([{ kind: 'taken' }, { kind: 'taken' }]);
    const next = runBatch(taking.state, [planOp]);
    expect(next.results).toEqual([{ kind: 'flush', batch: taking.state.inflight }]);
    expect(taking.state.inflight?.count).toBe(1);
  });
});
