/**
 * The hot-path Durable calls (functions/_durableRpc.ts) must send exactly what the library's own
 * client sends, to the same endpoint. Both are pointed at a local server that records requests.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { InvocationContext } from '@azure/functions';
import * as df from 'durable-functions';

import { DurableClientAdapter, durableClientOf } from '../../functions/_durable';
import { AppError } from '../../shared/errors';
import { DurableRpc, rpcBaseOf } from '../../functions/_durableRpc';

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly body: string;
  readonly contentType: string | undefined;
}

let server: Server;
let base: string;
let seen: Seen[] = [];
let answer = { status: 202, body: '' };

function record(req: IncomingMessage, body: string): void {
  seen.push({ method: req.method ?? '', url: req.url ?? '', body, contentType: req.headers['content-type']?.split(';')[0] });
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      record(req, Buffer.concat(chunks).toString('utf8'));
      res.writeHead(answer.status, answer.body === '' ? {} : { 'content-type': 'application/json' });
      res.end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/durabletask/`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  seen = [];
  answer = { status: 202, body: '' };
});

function contextWithClient(rpcBaseUrl: string | undefined): InvocationContext {
  const binding = df.input.durableClient();
  const context = new InvocationContext({ functionName: 'test', options: { extraInputs: [binding] } });
  const managementUrls = {
    id: 'INSTANCEID',
    statusQueryGetUri: `${base}instances/INSTANCEID`,
    sendEventPostUri: `${base}instances/INSTANCEID/raiseEvent/{eventName}`,
  };
  context.extraInputs.set(binding, {
    taskHubName: 'hub',
    creationUrls: { createNewInstancePostUri: `${base}orchestrators/{functionName}` },
    managementUrls,
    baseUrl: base,
    requiredQueryStringParameters: '',
    ...(rpcBaseUrl === undefined ? {} : { rpcBaseUrl }),
  });
  return context;
}

async function library(run: (client: df.DurableClient) => Promise<unknown>): Promise<Seen[]> {
  seen = [];
  await run(df.getClient(contextWithClient(base)));
  return seen;
}

async function lean(run: (rpc: DurableRpc) => Promise<unknown>): Promise<Seen[]> {
  seen = [];
  await run(new DurableRpc(new URL(base)));
  return seen;
}

describe('hot-path Durable calls', () => {
  it('finds the RPC base URL in the durableClient binding data, and none without it', () => {
    expect(rpcBaseOf(contextWithClient(base))?.href).toBe(base);
    expect(rpcBaseOf(contextWithClient(undefined))).toBeUndefined();
  });

  it('raise an event with the same request as the library client', async () => {
    const data = { gate: 'g', generation: 2 };
    const expected = await library((c) => c.raiseEvent('gate:g:run:1', 'GateReleased', data));
    const actual = await lean((r) => r.raiseEvent('gate:g:run:1', 'GateReleased', data));
    expect(actual).toEqual(expected);
    expect(actual[0]?.url).toBe('/durabletask/instances/gate:g:run:1/raiseEvent/GateReleased');
  });

  it('signal an entity with the same request as the library client', async () => {
    const expected = await library((c) => c.signalEntity(new df.EntityId('streamWriter', 'p00:orders'), 'append', { n: 1 }));
    const actual = await lean((r) => r.signalEntity('streamWriter', 'p00:orders', 'append', { n: 1 }));
    expect(actual).toEqual(expected);
  });

  it('read entity state with the same request as the library client', async () => {
    answer = { status: 200, body: '{"count":3}' };
    const expected = await library((c) => c.readEntityState(new df.EntityId('gate', 'g')));
    const actual = await lean((r) => r.readEntityState('gate', 'g'));
    expect(actual.map(({ method, url }) => ({ method, url }))).toEqual(expected.map(({ method, url }) => ({ method, url })));
  });

  it('one client per binding: an invocation with the binding of an earlier one gets its client, another binding a new one', () => {
    // Making the library's client checks every URL of the binding (validator's isURL): a third of a
    // millisecond per request on the real host's worker, for a client that holds nothing of an invocation.
    const first = durableClientOf(contextWithClient(base));
    expect(durableClientOf(contextWithClient(base))).toBe(first);
    const other = durableClientOf(contextWithClient('http://127.0.0.1:1/other/'));
    expect(other).not.toBe(first);
    expect(durableClientOf(contextWithClient('http://127.0.0.1:1/other/'))).toBe(other);
  });

  it('map the answers like the library: 202 and 410 delivered, 404 gone, 200 state', async () => {
    const adapter = durableClientOf(contextWithClient(base));
    expect(adapter).toBeInstanceOf(DurableClientAdapter);
    answer = { status: 410, body: '' };
    await expect(adapter.raiseEvent('done', 'e', null)).resolves.toBe('delivered');
    answer = { status: 404, body: '' };
    await expect(adapter.raiseEvent('missing', 'e', null)).resolves.toBe('gone');
    await expect(adapter.readState({ name: 'gate', key: 'g' })).resolves.toBeUndefined();
    answer = { status: 200, body: '{"count":3}' };
    await expect(adapter.readState({ name: 'gate', key: 'g' })).resolves.toEqual({ count: 3 });
  });
});

describe('Durable API failures', () => {
  const adapter = (rpc = true): DurableClientAdapter => durableClientOf(contextWithClient(rpc ? base : undefined));
  const entity = { name: 'gate', key: 'g' } as const;

  it('a 5xx or 429 answer is the backend unavailable (503, retry), with the answer logged and not shown', async () => {
    for (const status of [500, 503, 429]) {
      answer = { status, body: '{"Message":"storage said no at 10.0.0.7"}' };
      const failure = await adapter()
        .signal(entity, 'op', 1)
        .then(
          () => undefined,
          (err: unknown) => err,
        );
      expect(failure).toBeInstanceOf(AppError);
      const e = failure as AppError;
      expect({ code: e.code, status: e.status, retry: e.retryAfterSeconds }).toEqual({
        code: 'DependencyUnavailable',
        status: 503,
        retry: 1,
      });
      expect(e.message).not.toMatch(/10\.0\.0\.7/);
      expect(e.internal).toContain(String(status));
    }
    // Through the library client too (no RPC base): it reports the status only in its message.
    answer = { status: 500, body: '{"Message":"boom"}' };
    await expect(adapter(false).startNew('orch', 'i1', null)).rejects.toMatchObject({ code: 'DependencyUnavailable' });
  });

  it('an answer no call expects is a fault of ours (500), not a retry', async () => {
    answer = { status: 400, body: '{"Message":"bad input"}' };
    await expect(adapter().signal(entity, 'op', 1)).rejects.toMatchObject({ code: 'Internal', status: 500 });
    await expect(adapter().readState(entity)).rejects.toMatchObject({ code: 'Internal' });
  });

  it('a refused connection is the backend unavailable', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const gone = new DurableClientAdapter(
      df.getClient(contextWithClient(base)),
      new DurableRpc(new URL(`http://127.0.0.1:${port}/durabletask/`)),
    );
    await expect(gone.readState(entity)).rejects.toMatchObject({ code: 'DependencyUnavailable' });
  });

  it('a request on a kept-alive socket the listener has just closed is sent again on a new one', async () => {
    // The listener drops the connection of every second request it reads on one socket: what a
    // client sees when its idle socket was closed by the other end as it sent.
    const served: number[] = [];
    const flaky = createServer((req, res) => {
      const socket = req.socket as typeof req.socket & { requests?: number };
      socket.requests = (socket.requests ?? 0) + 1;
      if (socket.requests === 2) {
        socket.destroy();
        return;
      }
      served.push(socket.requests);
      req.resume();
      req.on('end', () => res.writeHead(202).end());
    });
    await new Promise<void>((resolve) => flaky.listen(0, '127.0.0.1', resolve));
    try {
      const rpc = new DurableRpc(new URL(`http://127.0.0.1:${(flaky.address() as AddressInfo).port}/durabletask/`));
      expect((await rpc.signalEntity('gate', 'g', 'op', 1)).status).toBe(202);
      expect((await rpc.signalEntity('gate', 'g', 'op', 2)).status).toBe(202);
      // The second went out on the kept socket, was dropped unread, and was served on a new one.
      expect(served).toEqual([1, 1]);
    } finally {
      flaky.closeAllConnections();
      await new Promise<void>((resolve) => flaky.close(() => resolve()));
    }
  });
});
