/** The flusher's activities: the only streams code that touches the log blobs. */
import type { ContainerClient } from '@azure/storage-blob';

import type { Clock } from '../clock';
import { appendBatch, openLog } from './appendLog';
import type { WriterAddress } from './names';
import type { FlushBatch, FlushOutcome, LogCursor } from './writerState';

export interface LogActivities {
  append(batch: FlushBatch): Promise<FlushOutcome>;
  open(address: WriterAddress): Promise<LogCursor>;
}

/** The activities on the logs' container. */
export function logActivities(container: () => Promise<ContainerClient>, clock: Clock): LogActivities {
  return {
    append: async (batch) => appendBatch(await container(), batch, clock),
    open: async (address) => openLog(await container(), address),
  };
}
