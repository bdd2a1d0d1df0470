/**
 * The client-gone signal against a real Node HTTP server in this process, as the library's proxy
 * server receives the host's forwarded request: the invocation is named by x-ms-invocation-id.
 */
import { createServer, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { watchClient } from '../../../shared/http/clientGone';
import { until as untilCondition } from '../../support/waits';

let server: Server;
let port: number;
const held: ServerResponse[] = [];

beforeAll(async () => {
  // Answers "done" at once, and holds "hold" open, as a long poll does.
  server = createServer((req, res) => {
    if (req.url === '/done') res.end('ok');
    else held.push(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  for (const res of held) res.destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function send(path: string, invocationId: string): { abort(): void; answered: Promise<void> } {
  const req = request({ host: '127.0.0.1', port, path, headers: { 'x-ms-invocation-id': invocationId } });
  const answered = new Promise<void>((resolve) => {
    req.on('response', (res) => res.resume().on('end', () => resolve()));
    req.on('error', () => resolve());
  });
  req.end();
  return { abort: () => req.destroy(), answered };
}

/** Waits until `check` holds (no budget of its own: test/support/waits.ts). */
const until = async (check: () => boolean): Promise<void> => {
  await untilCondition('the condition', () => (check() ? true : undefined), { everyMs: 10 });
};

test('a client that hangs up before its answer aborts the signal of its invocation, and only that one', async () => {
  const gone = watchClient('inv-gone');
  const other = watchClient('inv-other');
  const hung = send('/hold', 'inv-gone');
  send('/hold', 'inv-other');
  await until(() => held.length === 2);
  expect(gone.signal.aborted).toBe(false);
  hung.abort();
  await until(() => gone.signal.aborted);
  expect(gone.signal.aborted).toBe(true);
  expect(other.signal.aborted).toBe(false);
});

test('a completed answer never aborts it', async () => {
  const watch = watchClient('inv-done');
  await send('/done', 'inv-done').answered;
  await new Promise((r) => setTimeout(r, 50));
  expect(watch.signal.aborted).toBe(false);
});

test('a released watch is not aborted by a later hang-up of the same invocation id', async () => {
  const watch = watchClient('inv-released');
  watch.release();
  const hung = send('/hold', 'inv-released');
  await until(() => held.length === 3);
  hung.abort();
  await new Promise((r) => setTimeout(r, 100));
  expect(watch.signal.aborted).toBe(false);
});
