/**
 * An abort signal for "the client hung up", per invocation. The Functions library gives a handler no
 * such signal: in stream mode it receives the host's forwarded request on its own HTTP server and keeps
 * reading a streamed body after the connection is gone. Node publishes every server request on the
 * `http.server.request.start` diagnostics channel (https://nodejs.org/api/diagnostics_channel.html#http),
 * and the host names the invocation in the forwarded request's `x-ms-invocation-id` header
 * (@azure/functions src/http/httpProxy.ts), so the response closing before it finished is the client
 * leaving: both hosts tear the forwarded connection down when their client goes.
 *
 * Without stream mode no forwarded request arrives, and the signal never fires.
 */
import { subscribe } from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';

const invocationHeader = 'x-ms-invocation-id';
/** Per invocation: aborted when its client goes. Forgotten when its response closes, or on release. */
const watches = new Map<string, AbortController>();

interface RequestStart {
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
}

let listening = false;

function listen(): void {
  if (listening) return;
  listening = true;
  subscribe('http.server.request.start', (message) => {
    const { request, response } = message as RequestStart;
    // The header is read at the close: the devhost hands its own request to the library's server and
    // names the invocation on it only then.
    response.once('close', () => {
      const id = request.headers[invocationHeader];
      if (typeof id !== 'string') return;
      const watch = watches.get(id);
      if (watch === undefined) return;
      watches.delete(id);
      if (!response.writableFinished) watch.abort(new Error('The client closed the connection'));
    });
  });
}

export interface ClientWatch {
  /** Aborted when the client closes the connection before the answer is complete. */
  readonly signal: AbortSignal;
  /**
   * Forgets the watch: for an answer computed in full (nothing is left to stop), or one sent without
   * stream mode (no forwarded response would ever close it).
   */
  release(): void;
}

export function watchClient(invocationId: string): ClientWatch {
  listen();
  const watch = new AbortController();
  watches.set(invocationId, watch);
  return {
    signal: watch.signal,
    release() {
      if (watches.get(invocationId) === watch) watches.delete(invocationId);
    },
  };
}
