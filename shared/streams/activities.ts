/** The flusher's activities: the only streams code that touches the log blobs. */
import type { ContainerClient } from '@azure/storage-blob';

import type { Clock } from '../clock';
import { noTelemetry, type Telemetry } from '../telemetry/port';
import { appendBatch, openLog } from './appendLog';
import { streamTelemetry } from './metrics';
import type { WriterAddress } from './names';
import type { FlushBatch, FlushOutcome, LogCursor } from './writerState';

export interface LogActivities {
  append(batch: FlushBatch): Promise<FlushOutcome>;
  open(address: WriterAddress): Promise<LogCursor>;
}

/** The activities on the logs' container; the append records the flush metrics the replayed flusher cannot. */
export function logActivities(container: () => Promise<ContainerClient>, clock: Clock, telemetry: Telemetry = noTelemetry): LogActivities {
  const { metrics, spans } = telemetry.of(streamTelemetry);
  return {
    append: (batch) => {
      const partition = { 'tallyho.stream.partition': batch.partition };
      // A trace of its own linking the appends (a batch's consumer span), whatever context the activity got.
      return spans.flush.run({ attributes: partition, links: batch.links ?? [] }, async () => {
        try {
          const outcome = await appendBatch(await container(), batch, clock);
          metrics.flushed.add(batch.count, partition);
          if (batch.oldestAt !== undefined) metrics.lag.record(Math.max(0, clock.now() - batch.oldestAt) / 1000, partition);
          return outcome;
        } catch (err) {
          metrics.flushErrors.add(1, partition);
          throw err;
        }
      });
    },
    open: async (address) => openLog(await container(), address),
  };
}
