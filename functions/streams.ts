/**
 * Streams: HTTP registrations, the writer and ledger entities, the flusher orchestration and its
 * activities. The logic lives in shared/streams. The HTTP routes take the Durable client from their
 * `durableClient` input binding (functions/_durable.ts adapts it to the interface shared/ uses).
 */
import * as df from 'durable-functions';

import { appendBatchActivity, openLogActivity } from '../shared/streams/activities';
import { getStreamService } from '../shared/streams/defaults';
import { streamsFlusherOrchestrator } from '../shared/streams/flusher.orchestrator';
import { streamLedgerEntity } from '../shared/streams/ledger.entity';
import { streamsDurable, type WriterAddress } from '../shared/streams/names';
import { streamsRoutes } from '../shared/streams/routes';
import { streamWriterEntity } from '../shared/streams/writer.entity';
import type { FlushBatch } from '../shared/streams/writerState';
import { latestDurableClient, withDurableClient } from './_durable';
import { registerRoutes } from './_http';

// Every invocation's client carries the same binding data, so the newest one serves the request.
registerRoutes(streamsRoutes({ service: getStreamService, durable: latestDurableClient }), withDurableClient);

df.app.entity(streamsDurable.writerEntity, streamWriterEntity);
df.app.entity(streamsDurable.ledgerEntity, streamLedgerEntity);
df.app.orchestration(streamsDurable.flusher, streamsFlusherOrchestrator);
df.app.activity(streamsDurable.appendActivity, { handler: (batch: FlushBatch) => appendBatchActivity(batch) });
df.app.activity(streamsDurable.openActivity, { handler: (address: WriterAddress) => openLogActivity(address) });
