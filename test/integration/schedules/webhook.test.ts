/**
 * The webhook caller against real local HTTPS servers (self-signed certificate made in the test).
 * DNS is injected: `*.example.test` names point at 127.0.0.1, or at whatever address a case needs.
 */
import { createServer as createHttpServer, type ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';

import { parseAllowList } from '../../../shared/effects/webhook/allowList';
import { callWebhook, type ResolvedAddress, type WebhookOptions, WebhookRefused } from '../../../shared/effects/webhook/call';
import { type SelfSigned, selfSignedCert } from '../../support/selfSignedCert';

const names = ['hooks.example.test', 'other.example.test', 'evil.example.test'];
let tls: SelfSigned;

interface Seen {
  readonly host: string;
  readonly method: string;
  readonly path: string;
  readonly body: string;
}

let server: Server;
let port = 0;
const seen: Seen[] = [];
let respond: (path: string, res: ServerResponse) => void = (_p, res) => res.end('{"ok":true}');

beforeAll(async () => {
  tls = await selfSignedCert(names);
  server = createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ host: req.headers.host ?? '', method: req.method ?? '', path: req.url ?? '', body });
      respond(req.url ?? '', res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  seen.length = 0;
  respond = (_p, res) => res.end('{"ok":true}');
});

const toLoopback = (): Promise<readonly ResolvedAddress[]> => Promise.resolve([{ address: '127.0.0.1', family: 4 }]);

function options(overrides: Partial<WebhookOptions> = {}): WebhookOptions {
  return {
    allowed: parseAllowList([`hooks.example.test:${port}`, `other.example.test:${port}`]),
    timeoutMs: 2000,
    maxResponseBytes: 1024,
    maxRedirects: 3,
    allowPrivateAddresses: true,
    resolve: toLoopback,
    ca: tls.cert,
    ...overrides,
  };
}

const url = (host: string, path = '/hook'): string => `https://${host}:${port}${path}`;

describe('webhook calls', () => {
  it('POSTs the payload as JSON to an allowed host over verified TLS and reads the answer', async () => {
    const answer = await callWebhook(url('hooks.example.test'), { scheduleId: 's1' }, options());
    expect(answer).toMatchObject({ status: 200, body: '{"ok":true}', redirects: 0, truncated: false });
    expect(seen).toEqual([{ host: `hooks.example.test:${port}`, method: 'POST', path: '/hook', body: '{"scheduleId":"s1"}' }]);
  });

  it('refuses a host that resolves to loopback or any internal address, before connecting', async () => {
    for (const address of ['127.0.0.1', '10.0.0.7', '169.254.169.254', '192.168.0.10', '::1', '::ffff:127.0.0.1']) {
      const resolve = (): Promise<readonly ResolvedAddress[]> => Promise.resolve([{ address, family: address.includes(':') ? 6 : 4 }]);
      await expect(callWebhook(url('hooks.example.test'), {}, options({ allowPrivateAddresses: false, resolve }))).rejects.toThrow(
        new WebhookRefused(`hooks.example.test resolves to ${address}, which is not a public address`),
      );
    }
    // One internal answer among public ones is enough to refuse (DNS answers can be mixed on purpose).
    const mixed = (): Promise<readonly ResolvedAddress[]> =>
      Promise.resolve([
        { address: '93.184.216.34', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ]);
    await expect(
      callWebhook(url('hooks.example.test'), {}, options({ allowPrivateAddresses: false, resolve: mixed })),
    ).rejects.toBeInstanceOf(WebhookRefused);
    expect(seen).toEqual([]);
  });

  it('refuses non-HTTPS URLs and hosts off the list without sending anything', async () => {
    await expect(callWebhook(`http://hooks.example.test:${port}/hook`, {}, options())).rejects.toThrow(/Only https/);
    await expect(callWebhook(url('evil.example.test'), {}, options())).rejects.toThrow(/not on the webhook allow-list/);
    await expect(callWebhook(`https://127.0.0.1:${port}/hook`, {}, options())).rejects.toThrow(/allow-list/);
    expect(seen).toEqual([]);
  });

  it('does not follow a redirect off the list (another host, http, an internal address)', async () => {
    for (const location of [
      url('evil.example.test', '/steal'),
      `http://hooks.example.test:${port}/plain`,
      'https://169.254.169.254/latest/meta-data',
    ]) {
      seen.length = 0;
      respond = (path, res) => {
        if (path === '/hook') res.writeHead(302, { location }).end();
        else res.end('followed');
      };
      await expect(callWebhook(url('hooks.example.test'), {}, options())).rejects.toThrow(/Redirect refused/);
      expect(seen.map((s) => s.path)).toEqual(['/hook']);
    }
  });

  it('follows a redirect to an allowed host (307 keeps the POST, 302 becomes a GET) up to the bound', async () => {
    respond = (path, res) => {
      if (path === '/hook') res.writeHead(307, { location: url('other.example.test', '/moved') }).end();
      else res.end('done');
    };
    await expect(callWebhook(url('hooks.example.test'), { a: 1 }, options())).resolves.toMatchObject({
      status: 200,
      redirects: 1,
      body: 'done',
    });
    expect(seen.map((s) => `${s.method} ${s.host.split(':')[0] ?? ''}${s.path} ${s.body}`)).toEqual([
      'POST hooks.example.test/hook {"a":1}',
      'POST other.example.test/moved {"a":1}',
    ]);

    seen.length = 0;
    respond = (path, res) => {
      if (path === '/hook') res.writeHead(302, { location: '/next' }).end();
      else res.end('got');
    };
    await callWebhook(url('hooks.example.test'), { a: 1 }, options());
    expect(seen.map((s) => `${s.method} ${s.path}`)).toEqual(['POST /hook', 'GET /next']);

    respond = (_path, res) => res.writeHead(302, { location: '/again' }).end();
    await expect(callWebhook(url('hooks.example.test'), {}, options({ maxRedirects: 2 }))).rejects.toThrow(/More than 2 redirects/);
  });

  it('bounds the time and the body it reads', async () => {
    respond = (_path, res) => res.end('x'.repeat(100_000));
    await expect(callWebhook(url('hooks.example.test'), {}, options({ maxResponseBytes: 10 }))).resolves.toMatchObject({
      body: 'xxxxxxxxxx',
      truncated: true,
    });
    // A server that never answers: only the caller's own limit can end the call, and it hangs up.
    let hungUp: () => void = () => undefined;
    const closed = new Promise<void>((resolve) => (hungUp = resolve));
    respond = (_path, res) => void res.on('close', () => hungUp());
    await expect(callWebhook(url('hooks.example.test'), {}, options({ timeoutMs: 300 }))).rejects.toThrow(/No answer within 300 ms/);
    await closed;
  });

  it('verifies the certificate (an untrusted one fails)', async () => {
    await expect(callWebhook(url('hooks.example.test'), {}, options({ ca: (await selfSignedCert(names)).cert }))).rejects.toThrow();
  });
});

describe('plain http to loopback, for local development only', () => {
  it('is called when private addresses are allowed, and refused otherwise or when the name leaves the machine (before: any http was refused)', async () => {
    const plain = createHttpServer((req, res) => {
      req.resume();
      req.on('end', () => res.end('{"plain":true}'));
    });
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    const plainPort = (plain.address() as AddressInfo).port;
    try {
      const local = `http://localhost:${plainPort}/hook`;
      const allowed = parseAllowList([`localhost:${plainPort}`]);
      await expect(callWebhook(local, { a: 1 }, options({ allowed }))).resolves.toMatchObject({ status: 200, body: '{"plain":true}' });
      await expect(callWebhook(local, {}, options({ allowed, allowPrivateAddresses: false }))).rejects.toThrow(
        /Only https URLs may be called/,
      );
      // A loopback name that resolves elsewhere (a poisoned hosts file, a DNS answer) gets no plain http.
      const away = (): Promise<readonly ResolvedAddress[]> => Promise.resolve([{ address: '93.184.216.34', family: 4 }]);
      await expect(callWebhook(local, {}, options({ allowed, resolve: away }))).rejects.toThrow(/plain http goes to loopback only/);
    } finally {
      await new Promise((resolve) => plain.close(resolve));
    }
  });
});
