/**
 * Streams: HTTP registrations, the writer and ledger entities, the flusher orchestration and its
 * activities. The logic lives in shared/streams; this file binds it to the runtime and adapts the
 * durable-functions client to the small interface shared/ uses.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

import { app } from '@azure/functions';
import * as df from 'durable-functions';

import { appendBatchActivity, openLogActivity } from '../shared/streams/activities';
import { getStreamService } from '../shared/streams/defaults';
import type { StreamsDurableClient } from '../shared/streams/durablePort';
import { streamsFlusherOrchestrator } from '../shared/streams/flusher.orchestrator';
import { streamLedgerEntity } from '../shared/streams/ledger.entity';
import { streamsDurable } from '../shared/streams/names';
import { streamsRoutes } from '../shared/streams/routes';
import { streamWriterEntity } from '../shared/streams/writer.entity';
import type { FlushBatch } from '../shared/streams/writerState';
import { runRoute } from './_http';

const notFound = /HTTP 404|No instance with ID/;

function isNotFound(err: unknown): boolean {
  return err instanceof Error && notFound.test(err.message);
}

/** The durable-functions client, as the interface shared/streams uses. */
export function streamsDurableClient(client: df.DurableClient): StreamsDurableClient {
  return {
    signal: (entity, operation, input) => client.signalEntity(new df.EntityId(entity.name, entity.key), operation, input),
    async readState<T>(entity: { name: string; key: string }): Promise<T | undefined> {
      const response = await client.readEntityState<T>(new df.EntityId(entity.name, entity.key));
      return response.entityExists ? response.entityState : undefined;
    },
    async startNew(orchestration, instanceId, input) {
      await client.startNew(orchestration, { instanceId, input });
    },
    async runtimeStatus(instanceId) {
      try {
        return (await client.getStatus(instanceId)).runtimeStatus;
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    },
    async raiseEvent(instanceId, event, data) {
      try {
        await client.raiseEvent(instanceId, event, data);
        return 'delivered';
      } catch (err) {
        if (isNotFound(err)) return 'gone';
        throw err;
      }
    },
  };
}

const invocationClient = new AsyncLocalStorage<StreamsDurableClient>();

function currentClient(): StreamsDurableClient {
  const client = invocationClient.getStore();
  if (client === undefined) throw new Error('No Durable client bound to this invocation');
  return client;
}

for (const route of streamsRoutes({ service: getStreamService, durable: currentClient })) {
  app.http(route.name, {
    methods: [route.method],
    route: route.path,
    authLevel: route.auth,
    extraInputs: [df.input.durableClient()],
    handler: (request, context) =>
      invocationClient.run(streamsDurableClient(df.getClient(context)), () => runRoute(route, request, context)),
  });
}

df.app.entity(streamsDurable.writerEntity, streamWriterEntity);
df.app.entity(streamsDurable.ledgerEntity, streamLedgerEntity);
df.app.orchestration(streamsDurable.flusher, streamsFlusherOrchestrator);
df.app.activity(streamsDurable.appendActivity, { handler: (batch: FlushBatch) => appendBatchActivity(batch) });
df.app.activity(streamsDurable.openActivity, { handler: (address: { partition: string; resource: string }) => openLogActivity(address) });
