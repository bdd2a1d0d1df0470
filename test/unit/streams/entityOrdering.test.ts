/**
 * host.json turns off the Durable extension's entity message sorting, which stalled a stream's
 * flusher for over eight minutes in a real-host soak (docs/scale-out.md#streams).
 *
 * The extension orders and de-duplicates the messages an orchestration sends an entity
 * (azure-functions-durable-extension `MessageSorter.ReceiveInOrder`): each message names its
 * predecessor, and the receiver keeps ONE receive buffer per sender instance id, for one execution
 * id. The flusher continues as new every round, so each round is a new execution. After a kill, a
 * message of an old round came back (visibility timeout) between two messages of the current one:
 * the buffer switched to the old execution, then back with its "last delivered" reset, and the
 * current round's next request (`flushed`) was held "waiting for a non-delivered predecessor" that
 * had in fact been delivered — until the reorder window (30 minutes by default) passed AND another
 * sorted message arrived to move the horizon. The flusher waited for that answer, the writer never
 * ran it; kicks were only queued in the waiting flusher. Window 0 passes every message through
 * (`ReceiveInOrder`: "we are not doing any message sorting"). Nothing in the app needs the sorting:
 * the flusher waits for each answer before it sends its next request, and every writer operation
 * is safe to run twice or late (a stale batch id is ignored, `plan` hands out the batch in flight,
 * `opened` keeps the first cursor, ledger snapshots go by `rev`, handoffs by route version).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

describe('Durable entity message ordering', () => {
  it('is off in host.json (entityMessageReorderWindowInMinutes 0)', () => {
    const hostJson = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'host.json'), 'utf8')) as {
      extensions: { durableTask: Record<string, unknown> };
    };
    expect(hostJson.extensions.durableTask.entityMessageReorderWindowInMinutes).toBe(0);
  });
});
