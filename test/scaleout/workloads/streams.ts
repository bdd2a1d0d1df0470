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
      if (Date.now() > deadline) return;
      await sleep(reply?.status === 429 ? 1000 : 300);
    }
  }
}

export function streamsWorkload(): Workload {
  const tag = randomBytes(3).toString('hex');
  const st: State = { acknowledged: new Map(), sent: new Map() };
  const types = (ctx: RunContext): string[] => Array.from({ length: 2 * ctx.scale }, (_, i) => `so-stream-${tag}-${i}`);
  return {
    capability: 'streams',
    async setup(ctx) {
      for (const type of types(ctx)) {
        st.acknowledged.set(type, new Map());
        st.sent.set(type, new Set());
      }
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
          const reply = await untilAnswered(
            () => ctx.client.call<{ writer?: { bufferDepth?: number } }>('streams', 'status', 'GET', `/api/streams/${type}`),
            deadline,
          );
          if (reply?.body.writer?.bufferDepth === 0 || Date.now() > deadline) break;
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
        facts.push({ type, log, acknowledged: st.acknowledged.get(type) ?? new Map(), sent: st.sent.get(type) ?? new Set() });
      }
      return checkStreams(facts);
    },
  };
}
