/**
 * The Durable HTTP API (`HttpApiHandler`), served twice as the extension serves it: at the webhook path
 * `/runtime/webhooks/durabletask/` on the host's public port (the master key or the extension's system
 * key when the host checks keys; a lesser key the host knows is 403), and at `/durabletask/` on the
 * extension's own loopback listener, which the worker's `df.getClient(context)` calls through the
 * client binding's `rpcBaseUrl` (rpcListener.ts; devhost/docs/real-host.md#durable-rpc). Status codes
 * and bodies follow the extension: 202 while running, 410 once finished, `{"Message": …}` errors.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import { KeyPolicy } from '../keys';
import { type ClientLinkOptions, durableSystemKeyName, managementUrls, rpcPath, webhookPath } from './clientData';
import { clientRefusal, type DurableClientApi } from './client';
import { isTerminal } from './records';
import type { StatusPayload } from './status';
import { isDevhostError } from '../errors';

const maxBodyBytes = 16 * 1024 * 1024;

interface Request {
  readonly method: string;
  readonly url: URL;
  readonly segments: readonly string[];
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
  readonly origin: string;
}

interface Reply {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

const message = (status: number, text: string): Reply => ({ status, body: { Message: text } });

function bool(url: URL, name: string, fallback: boolean): boolean {
  const value = url.searchParams.get(name);
  return value === null ? fallback : /^true$/i.test(value);
}

function time(url: URL, name: string): number | undefined {
  const value = url.searchParams.get(name);
  if (value === null || value === '') return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

function int(url: URL, name: string): number | undefined {
  const value = Number(url.searchParams.get(name) ?? '');
  return Number.isInteger(value) && value > 0 ? value : undefined;
}

function isJson(headers: IncomingMessage['headers']): boolean {
  return (headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() === 'application/json';
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBodyBytes) reject(clientRefusal(413, 'The request body is too large.'));
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export class DurableHttpApi {
  constructor(
    private readonly client: DurableClientApi,
    private readonly links: Omit<ClientLinkOptions, 'origin'>,
    private readonly keys: KeyPolicy,
  ) {}

  /** Serves the public webhook path; resolves false for any other path (the host goes on). */
  async handleWebhook(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
    const lower = url.pathname.toLowerCase();
    if (lower !== webhookPath && !lower.startsWith(`${webhookPath}/`)) return false;
    const refusal = this.keys.systemRefusal(durableSystemKeyName, KeyPolicy.presented(req, url.searchParams));
    if (refusal !== undefined) DurableHttpApi.write(res, { status: refusal, headers: KeyPolicy.refusalHeaders(refusal) });
    else await this.serve(req, res, url, url.pathname.slice(webhookPath.length));
    return true;
  }

  /** Serves the worker-facing API (the RPC listener); any other path is 404. */
  async handleRpc(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (!url.pathname.toLowerCase().startsWith(`${rpcPath}/`) || (req.url ?? '/').startsWith('//'))
      DurableHttpApi.write(res, { status: 404 });
    else await this.serve(req, res, url, url.pathname.slice(rpcPath.length));
  }

  private async serve(req: IncomingMessage, res: ServerResponse, url: URL, rest: string): Promise<void> {
    let reply: Reply;
    try {
      const request: Request = {
        method: (req.method ?? 'GET').toUpperCase(),
        url,
        segments: rest
          .split('/')
          .filter((s) => s !== '')
          .map((s) => decodeURIComponent(s)),
        headers: req.headers,
        body: await readBody(req),
        origin: `http://${req.headers.host ?? 'localhost'}`,
      };
      reply = await this.route(request);
    } catch (err) {
      reply = isDevhostError(err, 'DurableClientRefused')
        ? message(err.status ?? 500, err.message)
        : message(500, 'Something went wrong while processing your request');
    }
    DurableHttpApi.write(res, reply);
  }

  private static write(res: ServerResponse, reply: Reply): void {
    const headers: Record<string, string> = { ...reply.headers };
    const text = reply.body === undefined ? '' : JSON.stringify(reply.body);
    if (reply.body !== undefined) headers['Content-Type'] = 'application/json; charset=utf-8';
    res.writeHead(reply.status, headers);
    res.end(text);
  }

  private async route(r: Request): Promise<Reply> {
    const hub = r.url.searchParams.get('taskHub');
    if (hub !== null && hub !== '' && hub.toLowerCase() !== this.links.hubName.toLowerCase()) {
      return message(404, `The devhost serves task hub '${this.links.hubName}', not '${hub}'.`);
    }
    const [area, first, second, third] = r.segments;
    if (area === 'orchestrators' && first !== undefined && r.segments.length <= 3 && r.method === 'POST')
      return this.start(r, first, second);
    if (area === 'entities' && r.segments.length <= 3) return this.entities(r, first, second);
    if (area === 'instances') {
      if (first === undefined) return r.method === 'GET' ? this.list(r) : r.method === 'DELETE' ? this.purgeBy(r) : { status: 404 };
      if (second === undefined)
        return r.method === 'GET' ? this.status(r, first) : r.method === 'DELETE' ? this.purge(first) : { status: 404 };
      if (r.method !== 'POST') return { status: 404 };
      if (second.toLowerCase() === 'raiseevent' && third !== undefined && r.segments.length === 4) return this.raise(r, first, third);
      if (r.segments.length === 3) return this.operate(r, first, second.toLowerCase());
    }
    return { status: 404 };
  }

  private checkStatus(r: Request, id: string): Reply {
    const links = managementUrls({ ...this.links, origin: r.origin }, id);
    const { rewindPostUri: _rewind, ...body } = links;
    return { status: 202, body, headers: { Location: links.statusQueryGetUri, 'Retry-After': '10' } };
  }

  private async start(r: Request, name: string, instanceId: string | undefined): Promise<Reply> {
    const input = r.body === '' ? null : r.body;
    const id = await this.client.start(name, { instanceId, input, version: r.url.searchParams.get('version') });
    const timeout = Number(r.url.searchParams.get('timeout') ?? '');
    if (Number.isFinite(timeout) && timeout > 0 && r.url.searchParams.has('pollingInterval')) return this.waitFor(r, id, timeout * 1000);
    return this.checkStatus(r, id);
  }

  private async waitFor(r: Request, id: string, timeoutMs: number): Promise<Reply> {
    await this.client.waitForCompletion(id, timeoutMs);
    const status = this.client.status(id);
    if (status?.runtimeStatus === 'Completed') return { status: 200, body: status.output };
    if (status !== undefined && isTerminal(status.runtimeStatus)) return { status: 200, body: status };
    return this.checkStatus(r, id);
  }

  private status(r: Request, id: string): Reply {
    const status = this.client.status(id, {
      showInput: bool(r.url, 'showInput', true),
      showHistory: bool(r.url, 'showHistory', false),
      showHistoryOutput: bool(r.url, 'showHistoryOutput', false),
    });
    if (status === undefined) return { status: 404 };
    if (!isTerminal(status.runtimeStatus))
      return { status: 202, body: status, headers: { Location: r.url.href.replace(/^http:\/\/[^/]+/, r.origin), 'Retry-After': '5' } };
    const failed = status.runtimeStatus === 'Failed' && bool(r.url, 'returnInternalServerErrorOnFailure', false);
    return { status: failed ? 500 : 200, body: status };
  }

  private query(r: Request): { createdTimeFrom?: number; createdTimeTo?: number; runtimeStatus?: string[]; instanceIdPrefix?: string } {
    const statuses = r.url.searchParams
      .getAll('runtimeStatus')
      .flatMap((s) => s.split(','))
      .map((s) => s.trim())
      .filter((s) => s !== '');
    const prefix = r.url.searchParams.get('instanceIdPrefix');
    const from = time(r.url, 'createdTimeFrom');
    const to = time(r.url, 'createdTimeTo');
    return {
      ...(from === undefined ? {} : { createdTimeFrom: from }),
      ...(to === undefined ? {} : { createdTimeTo: to }),
      ...(statuses.length === 0 ? {} : { runtimeStatus: statuses }),
      ...(prefix === null ? {} : { instanceIdPrefix: prefix }),
    };
  }

  private list(r: Request): Reply {
    const token = r.headers['x-ms-continuation-token'];
    const page = this.client.list({
      ...this.query(r),
      showInput: bool(r.url, 'showInput', true),
      top: int(r.url, 'top'),
      continuation: typeof token === 'string' ? token : undefined,
    });
    return {
      status: 200,
      body: page.items satisfies readonly StatusPayload[],
      headers: page.continuation === undefined ? {} : { 'x-ms-continuation-token': page.continuation },
    };
  }

  private async purge(id: string): Promise<Reply> {
    try {
      return { status: 200, body: { instancesDeleted: await this.client.purge(id) } };
    } catch (err) {
      if (isDevhostError(err, 'DurableClientRefused') && err.status === 404) return { status: 404 };
      throw err;
    }
  }

  private async purgeBy(r: Request): Promise<Reply> {
    const query = this.query(r);
    if (query.createdTimeFrom === undefined) return { status: 400, body: "Please provide value for 'createdTimeFrom' parameter." };
    const deleted = await this.client.purgeBy({ ...query, createdTimeTo: query.createdTimeTo ?? this.client.now() });
    return deleted === 0 ? { status: 404 } : { status: 200, body: { instancesDeleted: deleted } };
  }

  private async raise(r: Request, id: string, name: string): Promise<Reply> {
    const rec = this.client.record(id);
    if (rec === undefined) return { status: 404 };
    if (isTerminal(rec.status)) return { status: 410 };
    if (!isJson(r.headers)) return message(400, 'Only application/json request content is supported');
    await this.client.raiseEvent(id, name, r.body);
    return { status: 202 };
  }

  private async operate(r: Request, id: string, operation: string): Promise<Reply> {
    const reason = r.url.searchParams.get('reason');
    if (operation === 'rewind') return message(501, 'Rewind is not supported by the devhost.');
    if (operation === 'restart') return this.restart(r, id);
    const rec = this.client.record(id);
    if (rec === undefined) return { status: 404 };
    if (isTerminal(rec.status)) return { status: 410 };
    if (operation === 'terminate') await this.client.terminate(id, reason);
    else if (operation === 'suspend') await this.client.suspend(id, reason);
    else if (operation === 'resume') await this.client.resume(id, reason);
    else return { status: 404 };
    return { status: 202 };
  }

  private async restart(r: Request, id: string): Promise<Reply> {
    const rec = this.client.record(id);
    if (rec === undefined) return message(400, 'InstanceId does not match a valid orchestration instance.');
    const fresh = bool(r.url, 'restartWithNewInstanceId', true);
    const newId = await this.client.start(rec.name, { ...(fresh ? {} : { instanceId: id }), input: rec.input, version: rec.version });
    return this.checkStatus(r, newId);
  }

  private async entities(r: Request, name: string | undefined, key: string | undefined): Promise<Reply> {
    if (r.method === 'GET') {
      if (key === undefined || key === '') {
        const token = r.headers['x-ms-continuation-token'];
        const page = this.client.listEntities(name, {
          fetchState: bool(r.url, 'fetchState', false),
          top: int(r.url, 'top'),
          continuation: typeof token === 'string' ? token : undefined,
          from: time(r.url, 'lastOperationTimeFrom'),
          to: time(r.url, 'lastOperationTimeTo'),
        });
        return {
          status: 200,
          body: page.items,
          headers: page.continuation === undefined ? {} : { 'x-ms-continuation-token': page.continuation },
        };
      }
      const entity = this.client.readEntity(name ?? '', key === '$' ? '' : key);
      return entity.exists ? { status: 200, body: entity.state } : { status: 404 };
    }
    if (r.method !== 'POST' && r.method !== 'DELETE') return { status: 404 };
    if (name === undefined || name === '') return message(400, 'An entity name is required.');
    const operation = r.method === 'DELETE' ? 'delete' : (r.url.searchParams.get('op') ?? '');
    let input: string | null = null;
    if (r.body !== '') {
      if (isJson(r.headers)) {
        try {
          input = JSON.stringify(JSON.parse(r.body));
        } catch (err) {
          return message(400, `Could not parse JSON content: ${err instanceof Error ? err.message : String(err)}`);
        }
      } else {
        input = JSON.stringify(r.body);
      }
    }
    await this.client.signalEntity(name, key ?? '', operation, input);
    return { status: 202 };
  }
}
