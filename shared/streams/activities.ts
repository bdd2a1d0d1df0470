/** The flusher's activities: the only streams code that touches the log blobs. */
import { systemClock } from '../clock';
import { containers } from '../resources';
import { getStorage } from '../storage/clients';
import { appendBatch, openLog } from './appendLog';
import type { WriterAddress } from './names';
import type { FlushBatch, FlushOutcome, LogCursor } from './writerState';

export async function appendBatchActivity(batch: FlushBatch): Promise<FlushOutcome> {
  return appendBatch(await getStorage().container(containers.streams), batch, systemClock);
}

export async function openLogActivity(address: WriterAddress): Promise<LogCursor> {
  return openLog(await getStorage().container(containers.streams), address);
}
