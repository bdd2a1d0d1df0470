/**
 * Streams with several producers per stream, through the front door, while instances come and go
 * (real host only: a stream's writer is a Durable entity, and only the real host's instances share
 * one task hub). Each producer sends its next request once the previous one was answered; a request
 * refused or unanswered is sent again with the same events (its `seq`s make that safe). One producer
 * per stream waits for `ack=flushed`, the others for `ack=buffered`.
 */
import { randomBytes } from 'node:crypto';

import { checkStreams, type LoggedEvent, type StreamFacts } from '../checks/streams';
import { sleep, untilAnswered } from '../history';
import { blobTexts } from '../storage';
import { randomInt, type RunContext, type Workload } from '../workload';

interface State {
  readonly acknowledged: Map<string, Map<string, 'flushed' | 'buffered'>>;
  readonly sent: Map<string, Set<string>>;
}

/** The part of a writer entity's durable state (shared/streams/writerState.ts) the drain and check read. */
interface WriterView {
  readonly nextIndex: number;
  readonly flushedThrough: number;
  readonly buffer: string;
  readonly inflight: { readonly text: string } | null;
}

/**
 * The writer's own durable state, read through the Durable HTTP API (the master key): the app's
 * status route shows its ledger, a projection the writer reports to, which is not what the checker
 * may trust. The writer's key is `<partition>:<resource>`; the resource of a type without a route
 * row is the type itself.
 */
async function writerState(ctx: RunContext, type: string, deadline: number): Promise<WriterView | undefined> {
  const status = await untilAnswered(
    () => ctx.client.call<{ route?: { partition?: string; resource?: string } }>('streams', 'status', 'GET', `/api/streams/${type}`),
    deadline,
  );
  const route = status?.body.route;
  if (route?.partition === undefined || route.resource === undefined) return undefined;
  const key = encodeURIComponent(`${route.partition}:${route.resource}`);
  const reply = await untilAnswered(
    () =>
      ctx.client.call<WriterView>('streams', 'writerState', 'GET', `/runtime/webhooks/durabletask/entities/streamwriter/${key}`, {
        key: 'admin',
      }),
    deadline,
  );
  return reply?.status === 200 ? reply.body : undefined;
}

/** `producer/seq` of the events a writer holds durably but has not flushed (its buffer and in-flight batch). */
function unflushed(writer: WriterView | undefined): Set<string> {
  const out = new Set<string>();
  for (const text of [writer?.buffer ?? '', writer?.inflight?.text ?? ''])
    for (const line of text.split('\n'))
      if (line !== '') {
        const e = JSON.parse(line) as { producer?: string; seq?: number };
        out.add(`${String(e.producer)}/${String(e.seq)}`);
      }
  return out;
}

async function producer(ctx: RunContext, st: State, type: string, producerId: string, ack: 'flushed' | 'buffered'): Promise<void> {
  const acked = st.acknowledged.get(type) as Map<string, 'flushed' | 'buffered'>;
  const sent = st.sent.get(type) as Set<string>;
  let seq = 0;
  while (!ctx.loadEnded.aborted) {
    const events = Array.from({ length: randomInt(1, 4) }, () => {
      const e = { producer: producerId, seq, data: { seq } };
      seq++;
      return e;
    });
    for (const e of events) sent.add(`${producerId}/${e.seq}`);
    const deadline = Date.now() + 90_000;
    for (;;) {
      const { reply } = await ctx.client.call('streams', 'append', 'POST', `/api/streams/${type}/events?ack=${ack}`, {
        body: { events },
        data: { type, producer: producerId, seqs: events.map((e) => e.seq), ack },
        timeoutMs: 45_000,
      });
      if (reply?.status === 200 || reply?.status === 202) {
        for (const e of events) acked.set(`${producerId}/${e.seq}`, ack);
        break;
      }
      // A client's retry window (a real caller gives up too); what it achieved is checked, not how fast.
      // eslint-disable-next-line tallyho/no-elapsed-budget
      if (Date.now() > deadline) return;
      await sleep(reply?.status === 429 ? 1000 : 300);
    }
  }
}

export function streamsWorkload(): Workload {
  const tag = randomBytes(3).toString('hex');
  const st: State = { acknowledged: new Map(), sent: new Map() };
  const finalWriters = new Map<string, WriterView>();
  const types = (ctx: RunContext): string[] => Array.from({ length: 2 * ctx.scale }, (_, i) => `so-stream-${tag}-${i}`);
  return {
    capability: 'streams',
    setup(ctx) {
      for (const type of types(ctx)) {
        st.acknowledged.set(type, new Map());
        st.sent.set(type, new Set());
      }
      return Promise.resolve();
    },
    async run(ctx) {
      await Promise.all(
        types(ctx).flatMap((type) => [0, 1, 2].map((p) => producer(ctx, st, type, `p${p}`, p === 0 ? 'flushed' : 'buffered'))),
      );
    },
    async drain(ctx, deadline) {
      for (const type of types(ctx)) {
        await untilAnswered(() => ctx.client.call('streams', 'flush', 'POST', `/api/streams/${type}/flush`, { key: 'admin' }), deadline);
        for (;;) {
          const writer = await writerState(ctx, type, deadline);
          if (writer !== undefined) finalWriters.set(type, writer);
          if ((writer !== undefined && writer.flushedThrough === writer.nextIndex) || Date.now() > deadline) break;
          await sleep(1000);
        }
      }
    },
    async check(ctx) {
      const facts: StreamFacts[] = [];
      const blobs = await blobTexts(ctx.storage, 'streams', '');
      for (const type of types(ctx)) {
        const log: LoggedEvent[] = [];
        for (const blob of blobs.filter((b) => b.name.split('/')[1] === type))
          for (const line of blob.text.split('\n'))
            if (line !== '') {
              const e = JSON.parse(line) as { type?: string; producer?: string; seq?: number; index?: number };
              log.push({ producer: String(e.producer), seq: Number(e.seq), index: Number(e.index) });
            }
        facts.push({
          type,
          log,
          unflushed: unflushed(finalWriters.get(type)),
          acknowledged: st.acknowledged.get(type) ?? new Map(),
          sent: st.sent.get(type) ?? new Set(),
        });
      }
      return checkStreams(facts);
    },
  };
}
