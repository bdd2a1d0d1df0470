/** Writer values the streams unit tests share. */
import { opened } from '../../../shared/streams/writerFlush';
import {
  type AppendRequest,
  fallbackLimits,
  initialWriterState,
  type WriterLimits,
  type WriterState,
} from '../../../shared/streams/writerState';

/** Small enough that a test reaches N, the buffer limit and a flush cap in a few events. */
export const limits: WriterLimits = { ...fallbackLimits, flushEvents: 3, flushIntervalMs: 1000, maxBuffered: 6, flushMaxEvents: 100 };

/** Client time of every request unless overridden. */
export const requestAt = Date.UTC(2026, 0, 1);

let ids = 0;

/** An append of `events` to `orders` at route version 0, with a fresh request id, unless overridden. */
export function request(events: { producer: string; seq: number; data?: unknown }[], extra: Partial<AppendRequest> = {}): AppendRequest {
  return { requestId: `r${++ids}`, type: 'orders', version: 0, at: requestAt, limits, events, ...extra };
}

/** A writer whose log is open at its very start and holds nothing. */
export function opened0(writerLimits: WriterLimits = limits): WriterState {
  return opened(initialWriterState(writerLimits), { blob: 0, position: 0, blocks: 0 });
}
