/**
 * Durable Functions for the devhost, as a provider the host does not build in (an extension, as on the
 * real host): plays the Durable extension's side of the out-of-process protocol for durable-functions
 * 3.x (orchestration, activity and entity triggers, the `durableClient` binding), serves the Durable
 * HTTP API's webhooks on the public port and the worker-facing API on its own loopback listener.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import { webhookOrigin } from '../app/hostname';
import type { FunctionMetadata, NamedBinding, RpcParameterBinding, RpcTypedData } from '../core/types';
import type { HostProvider, HostServices } from '../provider';

import { DurableClientApi } from './client';
import { clientData, type ClientLinkOptions, durableSystemKeyName } from './clientData';
import { DurableEngine } from './engine';
import type { EngineObserver } from './ports';
import { DurableFunctions } from './functions';
import { DurableHttpApi } from './httpApi';
import { MemoryStore } from './memoryStore';
import { BlobStore, containerForHub } from './blobStore';
import { openRpcListener, type RpcListener } from './rpcListener';
import { readDurableSettings } from './settings';
import type { DurableStore } from './store';

const clientTypes = new Set(['durableclient', 'orchestrationclient']);
const durableTypes = new Set([...clientTypes, 'orchestrationtrigger', 'activitytrigger', 'entitytrigger']);
/** The extension's message when the host has no base URL (devhost/docs/real-host.md#host-name). */
const webhooksNotConfigured = 'Webhooks are not configured';

export interface DurableExtensionOptions {
  /** Overrides the store the settings would choose (tests). */
  readonly store?: DurableStore;
  readonly observer?: EngineObserver;
}

export class DurableExtension implements HostProvider {
  readonly name = 'durable';
  readonly bindingTypes = ['orchestrationTrigger', 'activityTrigger', 'entityTrigger', 'durableClient', 'orchestrationClient'];
  private engine: DurableEngine | undefined;
  private api: DurableHttpApi | undefined;
  private rpc: RpcListener | undefined;
  /** Set once started; `clientJson` is undefined then only when the host has no host name. */
  private started = false;
  private clientJson: string | undefined;

  constructor(private readonly options: DurableExtensionOptions = {}) {}

  /** The engine, once started (tests and diagnostics). */
  get running(): DurableEngine | undefined {
    return this.engine;
  }

  async start(host: HostServices): Promise<void> {
    const settings = readDurableSettings(host.config.durableTask, host.settings);
    const store = this.options.store ?? this.chooseStore(host, settings.store, settings.connectionName, settings.hubName);
    // The links carry the extension's own system key, never the master key, as the real host's do
    // (`connection=Storage&code=<durabletask_extension key>`, devhost/docs/real-host.md#durable-links).
    const code = host.keys.systemKey(durableSystemKeyName);
    const links: Omit<ClientLinkOptions, 'origin'> = { hubName: settings.hubName, connectionName: settings.connectionName, code };
    if (host.hostName === undefined && this.hasClientBindings(host)) {
      host.log('warn', `Durable Functions: WEBSITE_HOSTNAME is not set, so every durableClient binding fails (${webhooksNotConfigured})`);
    }
    // Durable-triggered functions get their client inputs too (an activity may declare df.input.durableClient()).
    const extraInputs = (fn: FunctionMetadata): RpcParameterBinding[] =>
      Object.entries(fn.bindings).flatMap(([name, b]) => {
        const data = this.inputData({ ...b, name }, fn);
        return data === undefined || b.direction === 'out' ? [] : [{ name, data }];
      });
    const engine = new DurableEngine({
      store,
      clock: host.clock,
      functions: new DurableFunctions(host.functions, host.invoker, extraInputs),
      log: host.log,
      limits: settings.limits,
      entityMessageReorderWindowMinutes: settings.entityMessageReorderWindowMinutes,
      ...(this.options.observer === undefined ? {} : { observer: this.options.observer }),
    });
    const api = new DurableHttpApi(new DurableClientApi(engine), links, host.keys);
    // The worker's client calls wait until the store is loaded (an activity may call it while the engine recovers).
    let loaded = Promise.resolve();
    const rpc = await openRpcListener(
      async (req, res) => {
        await loaded;
        await api.handleRpc(req, res);
      },
      (err) => host.log('error', `Durable RPC request failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`),
    );
    // The links' origin is the host name (WEBSITE_HOSTNAME), as the real host builds webhook URLs; the
    // worker's client calls go to the extension's own listener.
    this.clientJson =
      host.hostName === undefined ? undefined : JSON.stringify(clientData({ ...links, origin: webhookOrigin(host.hostName) }, rpc.baseUrl));
    this.started = true;
    this.warnUnservedBindings(host);
    loaded = engine.start();
    try {
      await loaded;
    } catch (err) {
      await rpc.close();
      throw err;
    }
    this.engine = engine;
    this.api = api;
    this.rpc = rpc;
    host.log('debug', `Durable Functions: task hub ${settings.hubName}, ${store.kind} store; local RPC endpoint ${rpc.baseUrl}`);
  }

  /** Durable-triggered functions get their client inputs only; say so for any other binding. */
  private warnUnservedBindings(host: HostServices): void {
    for (const metadata of host.functions) {
      const bindings = Object.entries(metadata.bindings);
      if (!bindings.some(([, b]) => /^(orchestration|activity|entity)trigger$/i.test(b.type ?? ''))) continue;
      const unserved = bindings
        .filter(([name, b]) => !durableTypes.has(b.type?.toLowerCase() ?? '') && name !== '$return')
        .map(([name, b]) => `${name} (${b.type ?? '?'})`);
      if (unserved.length > 0) {
        host.log(
          'warn',
          `Function '${metadata.name}': the devhost does not serve ${unserved.join(', ')} on durable-triggered functions; they are ignored`,
        );
      }
    }
  }

  private hasClientBindings(host: HostServices): boolean {
    return host.functions.some((fn) => Object.values(fn.bindings).some((b) => clientTypes.has(b.type?.toLowerCase() ?? '')));
  }

  private chooseStore(host: HostServices, kind: 'storage' | 'memory' | 'auto', connectionName: string, hubName: string): DurableStore {
    const usesDurable = host.functions.some((fn) => Object.values(fn.bindings).some((b) => durableTypes.has(b.type?.toLowerCase() ?? '')));
    if (kind === 'memory' || (kind === 'auto' && !usesDurable)) return new MemoryStore();
    let connection: string;
    try {
      connection = host.storage.connectionString(connectionName);
    } catch (err) {
      if (kind === 'storage') throw err;
      host.log(
        'warn',
        `Durable Functions state is kept in memory only (${connectionName} is not set): a restart loses orchestrations and entities`,
      );
      return new MemoryStore();
    }
    return new BlobStore(connection, containerForHub(hubName));
  }

  async stop(): Promise<void> {
    await this.engine?.stop();
    await this.rpc?.close();
  }

  /**
   * The client binding's data. Without a host name it fails the invocation before the function
   * runs, as the real host's binding does (`Exception binding parameter …`).
   */
  inputData(binding: NamedBinding, _fn: FunctionMetadata): RpcTypedData | undefined {
    if (!clientTypes.has(binding.type?.toLowerCase() ?? '') || !this.started) return undefined;
    if (this.clientJson === undefined) {
      throw new Error(
        `Exception binding parameter '${binding.name}': ${webhooksNotConfigured} (WEBSITE_HOSTNAME is not set; Azure and func start set it)`,
      );
    }
    return { string: this.clientJson };
  }

  handleHttp(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
    return this.api === undefined ? Promise.resolve(false) : this.api.handleWebhook(req, res, url);
  }

  idle(): boolean {
    return this.engine?.idle() ?? true;
  }
}
