/** Streams: the writer and ledger entities, the flusher orchestration, its activities and the sweep timer; the logic lives in shared/streams. */
import { app } from '@azure/functions';
import * as df from 'durable-functions';

import { streamsFlusherOrchestrator } from '../shared/streams/flusher.orchestrator';
import { streamLedgerEntity } from '../shared/streams/ledger.entity';
import { streamsDurable, type WriterAddress } from '../shared/streams/names';
import { streamWriterEntity } from '../shared/streams/writer.entity';
import type { FlushBatch } from '../shared/streams/writerState';
import { durableClientOf } from './_durable';
import { registration, theApp } from './_app';

df.app.entity(streamsDurable.writerEntity, streamWriterEntity);
df.app.entity(streamsDurable.ledgerEntity, streamLedgerEntity);
df.app.orchestration(streamsDurable.flusher, streamsFlusherOrchestrator);
df.app.activity(streamsDurable.appendActivity, { handler: (batch: FlushBatch) => theApp().streams.logs.append(batch) });
df.app.activity(streamsDurable.openActivity, { handler: (address: WriterAddress) => theApp().streams.logs.open(address) });
app.timer('streamsSweep', {
  // Every minute by default (TALLYHO_STREAMS_SWEEP_SCHEDULE): a flush overdue by a lost wake-up waits at most about this long without traffic.
  schedule: registration.streams.sweepSchedule,
  extraInputs: [df.input.durableClient()],
  handler: async (_timer, context) => {
    await theApp().streams.service.sweep(durableClientOf(context));
  },
});
