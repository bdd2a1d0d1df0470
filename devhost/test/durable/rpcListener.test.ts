/**
 * The worker-facing Durable API (devhost/docs/real-host.md#durable-rpc): served on a loopback
 * listener of its own, which only the durableClient binding's `rpcBaseUrl` names; the host's public
 * port has no `/durabletask/` route. The real extension's listener (LocalHttpListener.cs) checks no
 * key either: it is reachable from this machine only, and only the worker is told where it is.
 */
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';

import type { FunctionMetadata } from '../../core/types';
import { type InProcessHost, startInProcess } from './support/inProcess';

describe('the Durable RPC listener', () => {
  let h: InProcessHost;
  let rpcBaseUrl: URL;
  const client = { name: 'client', type: 'durableClient', direction: 'in' as const };
  const metadata = { name: 'any', bindings: { client } } as unknown as FunctionMetadata;

  beforeAll(async () => {
    h = await startInProcess({ env: { FUNCTIONS_KEY: 'fk', FUNCTIONS_ADMIN_KEY: 'mk' } });
    const data = JSON.parse(h.durable.inputData(client, metadata)?.string ?? 'null') as { rpcBaseUrl: string; baseUrl: string };
    rpcBaseUrl = new URL(data.rpcBaseUrl);
  });
  afterAll(async () => {
    await h.host.stop();
  });

  test('the client binding names a loopback listener on a port of its own; the webhooks stay on the public port', () => {
    const data = JSON.parse(h.durable.inputData(client, metadata)?.string ?? 'null') as { baseUrl: string };
    expect(rpcBaseUrl.protocol).toBe('http:');
    expect(rpcBaseUrl.hostname).toBe('127.0.0.1');
    expect(rpcBaseUrl.pathname).toBe('/durabletask/');
    expect(Number(rpcBaseUrl.port)).toBeGreaterThan(0);
    expect(Number(rpcBaseUrl.port)).not.toBe(h.host.port);
    expect(new URL(data.baseUrl).port).toBe(String(h.host.port));
  });

  test('the listener serves the API the worker calls; the same path on the public port is 404', async () => {
    const id = await h.client.start('waiter', { instanceId: 'rpc-listener-1' });
    const viaListener = await fetch(new URL(`instances/${id}`, rpcBaseUrl));
    expect(viaListener.status).toBe(202);
    expect(await viaListener.json()).toMatchObject({ instanceId: id, name: 'waiter' });
    const viaPublic = await fetch(`${h.host.baseUrl}/durabletask/instances/${id}`);
    expect(viaPublic.status).toBe(404);
    // Anything else on the listener is not found.
    expect((await fetch(new URL('/runtime/webhooks/durabletask/instances', rpcBaseUrl))).status).toBe(404);
  });

  test('the listener answers only its own address as Host: another name (DNS rebinding from a web page) is 400, and nothing runs', async () => {
    const id = await h.client.start('waiter', { instanceId: 'rpc-listener-host' });
    const statusWith = (host: string): Promise<number> =>
      new Promise((resolve, reject) => {
        const req = httpRequest(
          { host: '127.0.0.1', port: Number(rpcBaseUrl.port), path: `/durabletask/instances/${id}`, headers: { host } },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end();
      });
    expect(await statusWith('evil.example')).toBe(400);
    expect(await statusWith(`evil.example:${rpcBaseUrl.port}`)).toBe(400);
    expect(await statusWith(`127.0.0.1:${Number(rpcBaseUrl.port) + 1}`)).toBe(400);
    expect(await statusWith(`127.0.0.1:${rpcBaseUrl.port}`)).toBe(202);
    expect(await statusWith(`localhost:${rpcBaseUrl.port}`)).toBe(202);
  });

  test('the listener closes with the host', async () => {
    const h2 = await startInProcess();
    const data = JSON.parse(h2.durable.inputData(client, metadata)?.string ?? 'null') as { rpcBaseUrl: string };
    const port = Number(new URL(data.rpcBaseUrl).port);
    await h2.host.stop();
    const refused = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port }, () => {
        socket.destroy();
        resolve(false);
      });
      socket.on('error', () => resolve(true));
    });
    expect(refused).toBe(true);
  });
});
