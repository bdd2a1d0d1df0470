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

interface Watch {
  readonly controller: AbortController;
  /** The forwarded request has arrived; its response's close then forgets the entry. */
  seen: boolean;
}

const invocationHeader = 'x-ms-invocation-id';
const watches = new Map<string, Watch>();

function watchOf(invocationId: string): Watch {
  let watch = watches.get(invocationId);
  if (watch === undefined) {
    watch = { controller: new AbortController(), seen: false };
    watches.set(invocationId, watch);
  }
  return watch;
}

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
    const id = request.headers[invocationHeader];
    if (typeof id !== 'string') return;
    const watch = watchOf(id);
    watch.seen = true;
    response.once('close', () => {
      if (!response.writableFinished) watch.controller.abort(new Error('The client closed the connection'));
      if (watches.get(id) === watch) watches.delete(id);
    });
  });
}

export interface ClientWatch {
  /** Aborted when the client closes the connection before the answer is complete. */
  readonly signal: AbortSignal;
  /** Forgets the watch when the answer is complete without a forwarded request (not stream mode). */
  release(): void;
}

export function watchClient(invocationId: string): ClientWatch {
  listen();
  const watch = watchOf(invocationId);
  return {
    signal: watch.controller.signal,
    release() {
      if (!watch.seen && watches.get(invocationId) === watch) watches.delete(invocationId);
    },
  };
}
