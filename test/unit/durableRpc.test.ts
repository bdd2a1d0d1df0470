/**
 * The hot-path Durable calls (functions/_durableRpc.ts) must send exactly what the library's own
 * client sends, to the same endpoint. Both are pointed at a local server that records requests.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { InvocationContext } from '@azure/functions';
import * as df from 'durable-functions';

import { DurableClientAdapter, durableClientOf } from '../../functions/_durable';
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

  it('map the answers like the library: 202 and 410 delivered, 404 gone, 200 state, other statuses errors', async () => {
    const adapter = durableClientOf(contextWithClient(base));
    expect(adapter).toBeInstanceOf(DurableClientAdapter);
    answer = { status: 410, body: '' };
    await expect(adapter.raiseEvent('done', 'e', null)).resolves.toBe('delivered');
    answer = { status: 404, body: '' };
    await expect(adapter.raiseEvent('missing', 'e', null)).resolves.toBe('gone');
    await expect(adapter.readState({ name: 'gate', key: 'g' })).resolves.toBeUndefined();
    answer = { status: 200, body: '{"count":3}' };
    await expect(adapter.readState({ name: 'gate', key: 'g' })).resolves.toEqual({ count: 3 });
    answer = { status: 500, body: '{"Message":"boom"}' };
    await expect(adapter.signal({ name: 'gate', key: 'g' }, 'op', 1)).rejects.toThrow(/500/);
  });
});
