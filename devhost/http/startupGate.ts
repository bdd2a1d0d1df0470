/**
 * Requests that arrive between "listening" and "ready". The port opens before the app's hooks,
 * extensions and triggers have started; the real host holds such requests and answers them once it
 * is running. This does the same: held requests are handed to the front door when it opens, or
 * answered 503 with Retry-After if the host fails to start. None is left hanging.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export class StartupGate {
  private held: [IncomingMessage, ServerResponse][] = [];
  private handler: Handler | undefined;
  private refused = false;

  readonly handle: Handler = (req, res) => {
    if (this.handler !== undefined) this.handler(req, res);
    else if (this.refused) StartupGate.unavailable(res);
    else this.held.push([req, res]);
  };

  /** The host is ready: serve what was held, in arrival order, and everything after. */
  open(handler: Handler): void {
    this.handler = handler;
    for (const [req, res] of this.held.splice(0)) handler(req, res);
  }

  /** The host did not start: answer what was held, and anything later, 503. */
  refuse(): void {
    if (this.handler !== undefined) return;
    this.refused = true;
    for (const [, res] of this.held.splice(0)) StartupGate.unavailable(res);
  }

  private static unavailable(res: ServerResponse): void {
    if (res.headersSent) return;
    res.writeHead(503, { 'Retry-After': '1', 'Content-Length': 0, Connection: 'close' });
    res.end();
  }
}
