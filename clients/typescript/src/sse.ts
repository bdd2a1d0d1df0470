/**
 * A server-sent events reader over fetch (EventSource cannot send the key header). It yields each
 * event as it completes, reports every chunk (heartbeat comments included) to `onActivity` so a
 * caller can detect a silent connection, and ends when the server closes the stream.
 */
import { throwIfAborted } from './signals.js';

export interface ServerEvent {
  readonly event: string;
  readonly data: string;
  readonly id: string | undefined;
  /** The `retry:` hint the stream carried so far, in milliseconds. */
  readonly retryMs: number | undefined;
}

export async function* readEvents(
  body: ReadableStream<Uint8Array>,
  options: { onActivity?: () => void; abortSignal?: AbortSignal } = {},
): AsyncGenerator<ServerEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const onActivity = options.onActivity ?? (() => undefined);
  // fetch ends the body when its signal aborts, but not every fetch (or test double) does: cancel
  // the read here too, so an abort or a heartbeat timeout never leaves a reader hanging.
  const onAbort = (): void => void reader.cancel(options.abortSignal?.reason).catch(() => undefined);
  options.abortSignal?.addEventListener('abort', onAbort, { once: true });
  let buffer = '';
  let retryMs: number | undefined;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      throwIfAborted(options.abortSignal);
      if (done) return;
      onActivity();
      buffer += decoder.decode(value, { stream: true });
      for (let end = buffer.search(/\r?\n\r?\n/); end !== -1; end = buffer.search(/\r?\n\r?\n/)) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
        const parsed = parseBlock(block);
        if (parsed.retryMs !== undefined) retryMs = parsed.retryMs;
        if (parsed.data.length > 0) yield { event: parsed.event, data: parsed.data.join('\n'), id: parsed.id, retryMs };
      }
    }
  } finally {
    options.abortSignal?.removeEventListener('abort', onAbort);
    // Ends the fetch when the consumer stops early (a return from for-await lands here).
    await reader.cancel().catch(() => undefined);
  }
}

function parseBlock(block: string): { event: string; data: string[]; id: string | undefined; retryMs: number | undefined } {
  let event = 'message';
  let id: string | undefined;
  let retryMs: number | undefined;
  const data: string[] = [];
  for (const line of block.split(/\r?\n/)) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
    else if (field === 'id') id = value;
    else if (field === 'retry' && /^\d+$/.test(value)) retryMs = Number(value);
  }
  return { event, data, id, retryMs };
}
