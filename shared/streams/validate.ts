/**
 * Checks a batch of events beyond what the schema can (limits come from settings), for HTTP and for
 * in-process callers alike. Nothing reaches a writer before this passes.
 */
import type { StreamSettings } from './settings';
import { type FieldIssue, validationError } from '../errors';
import { zodIssues } from '../http/route';
import { eventType, type StreamEventInput, streamEvent } from './schemas';

const encoder = new TextEncoder();

export function validateBatch(
  type: string,
  events: readonly unknown[],
  settings: StreamSettings,
  path = 'body.events',
): StreamEventInput[] {
  const issues: FieldIssue[] = [];
  const typeCheck = eventType.safeParse(type);
  if (!typeCheck.success) issues.push(...zodIssues(typeCheck.error, 'params.type'));
  if (events.length === 0) issues.push({ path, message: 'At least one event is required' });
  if (events.length > settings.maxBatchEvents) {
    issues.push({ path, message: `At most ${settings.maxBatchEvents} events per request (TALLYHO_STREAMS_MAX_BATCH_EVENTS)` });
  }
  const parsed: StreamEventInput[] = [];
  const lastSeq = new Map<string, number>();
  events.forEach((raw, i) => {
    const result = streamEvent.safeParse(raw);
    if (!result.success) {
      issues.push(...zodIssues(result.error, `${path}.${i}`));
      return;
    }
    const event = result.data;
    const bytes = encoder.encode(JSON.stringify(event)).length;
    if (bytes > settings.maxEventBytes) {
      issues.push({
        path: `${path}.${i}`,
        message: `The event is ${bytes} bytes; at most ${settings.maxEventBytes} (TALLYHO_STREAMS_MAX_EVENT_BYTES)`,
      });
    }
    const previous = lastSeq.get(event.producer);
    if (previous !== undefined && event.seq <= previous) {
      issues.push({ path: `${path}.${i}.seq`, message: `Sequence numbers of producer ${event.producer} must increase within a request` });
    }
    lastSeq.set(event.producer, event.seq);
    parsed.push(event);
  });
  if (issues.length > 0) throw validationError('The events are not valid; nothing was written', issues);
  return parsed;
}
