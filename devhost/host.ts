/**
 * `startHost`: loads a v4 Node app the way the Functions host and Node worker do and serves its
 * HTTP, storage-queue and timer triggers (plus whatever extensions add, e.g. Durable Functions).
 *
 * Order of start-up, as on the real host: settings (environment over local.settings.json), host.json,
 * the `@azure/functions-core` hook, the app's entry points, `getCapabilities` (locks `app.setup`,
 * starts the library's HTTP stream proxy when streaming is on), `appStart` hooks, extensions,
 * triggers, then the HTTP listener. `stop()` refuses new requests, stops triggers, drains in-flight
 * invocations, runs `appTerminate` hooks and stops extensions.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { availableParallelism } from 'node:os';
import { basename, resolve } from 'node:path';

import { type FunctionSummary, adminRoutes } from './admin';
import { websiteHostname } from './app/hostname';
import { type JsonObject, loadHostJson, readNumber, readString, readTimeSpanMs } from './app/hostJson';
import { entryFiles, forgetApp, loadEntries, readPackageJson } from './app/loader';
import { getSetting, isFunctionDisabled, mergeSettings, readLocalSettings, resolveSettingExpressions, SettingsError } from './app/settings';
import { BindingIo } from './bindings/bindingIo';
import { StorageClients } from './bindings/storage';
import { type HostClock, RealClock, VirtualClock } from './clock';
import { ClockControl } from './clockControl';
import { installCoreApi, Registry } from './core/coreApi';
import { nativeProcess } from './core/nativeModule';
import { Invoker } from './core/invoker';
import type { FunctionMetadata, RpcBindingInfo, RpcParameterBinding } from './core/types';
import { flag, text } from './core/values';
import type { HostExtension, HostLogger, HostServices } from './extension';
import { printFunctionTable } from './functionTable';
import { CorsPolicy } from './http/cors';
import { HttpFrontDoor } from './http/frontDoor';
import { FunctionRoutes, httpTrigger } from './http/functionRoutes';
import { KeyPolicy } from './http/keys';
import { StartupGate } from './http/startupGate';
import { StreamProxy } from './http/streamProxy';
import { consoleLogger, fromRpcLevel } from './log';
import { type QueueOptions, QueueListener } from './triggers/queueTrigger';
import { parseSchedule, validateTimeZone } from './triggers/schedule';
import { BlobTimerStatusStore, MemoryTimerStatusStore, TimerListener, type TimerStatusStore } from './triggers/timerTrigger';

export interface StartHostOptions {
  /** The app's folder (its package.json `main` names the entry points). */
  readonly appRoot: string;
  /** HTTP port; 0 picks a free one. Default: the PORT setting, else local.settings.json Host.LocalHttpPort, else 7071. */
  readonly port?: number;
  /** Address to listen on (default 127.0.0.1). */
  readonly host?: string;
  /** Settings that win over the environment and local.settings.json (undefined removes one). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly extensions?: readonly HostExtension[];
  /** Default: a VirtualClock when DEVHOST_VIRTUAL_CLOCK=true, else the real clock. */
  readonly clock?: HostClock;
  /** Warnings and errors only. */
  readonly quiet?: boolean;
  readonly log?: HostLogger;
  /** How long `stop()` waits for in-flight invocations (default 30 s). */
  readonly drainTimeoutMs?: number;
  /**
   * When no setting gives WEBSITE_HOSTNAME, set it to `localhost:<port>` as `func start` does
   * (default true). False runs the bare runtime, which has no base URL: every Durable client binding
   * then fails with "Webhooks are not configured", as on the real host.
   */
  readonly hostnameLikeFuncStart?: boolean;
}

export interface RunningHost {
  readonly baseUrl: string;
  readonly port: number;
  readonly registry: Registry;
  readonly invoker: Invoker;
  readonly clock: HostClock;
  readonly settings: Readonly<Record<string, string | undefined>>;
  /** WEBSITE_HOSTNAME as the host uses it (undefined: none, so no Durable client binding works). */
  readonly hostName: string | undefined;
  readonly hostJson: Readonly<JsonObject>;
  readonly functions: readonly FunctionSummary[];
  /** The master key `/admin/*` needs: FUNCTIONS_ADMIN_KEY, or one made up for this run. */
  readonly masterKey: string;
  /** True when the master key was made up for this run (no FUNCTIONS_ADMIN_KEY). */
  readonly masterKeyGenerated: boolean;
  /** Waits until no background invocation runs and every extension is idle. */
  settle(): Promise<void>;
  /** Moves a virtual clock to `at` in steps (fails on a real clock). */
  advanceClockTo(at: number): Promise<void>;
  stop(): Promise<void>;
}

interface IndexedFunction {
  readonly metadata: FunctionMetadata;
  /** Bindings with `%Setting%` resolved (the library keeps the raw ones, as with the real worker). */
  readonly bindings: Record<string, RpcBindingInfo>;
  readonly trigger: [string, RpcBindingInfo] | undefined;
  readonly disabled: boolean;
  readonly error: string | undefined;
}

const nonResolvedKeys = new Set(['name', 'type', 'direction']);

function resolveBindings(fn: FunctionMetadata, settings: Readonly<Record<string, string | undefined>>): Record<string, RpcBindingInfo> {
  const out: Record<string, RpcBindingInfo> = {};
  for (const [name, binding] of Object.entries(fn.bindings)) {
    const copy: RpcBindingInfo = { ...binding };
    for (const [key, value] of Object.entries(binding)) {
      if (typeof value === 'string' && !nonResolvedKeys.has(key))
        copy[key] = resolveSettingExpressions(value, settings, `function ${fn.name} binding ${name}.${key}`);
    }
    out[name] = copy;
  }
  return out;
}

function hostIdFor(appRoot: string, appName: string | undefined, settings: Readonly<Record<string, string | undefined>>): string {
  const configured = getSetting(settings, 'AzureFunctionsWebHost__hostid');
  if (configured !== undefined && configured.trim() !== '') return configured.trim().toLowerCase();
  const base =
    (appName ?? basename(appRoot))
      .toLowerCase()
      .replace(/[^a-z0-9-]/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 22) || 'app';
  const hash = createHash('sha256').update(resolve(appRoot)).digest('hex').slice(0, 8);
  return `${base}-${hash}`;
}

function queueOptions(hostJson: JsonObject): QueueOptions {
  const batchSize = Math.min(32, Math.max(1, Math.floor(readNumber(hostJson, 'extensions.queues.batchSize', 16))));
  const encoding = (readString(hostJson, 'extensions.queues.messageEncoding') ?? 'base64').toLowerCase();
  if (encoding !== 'base64' && encoding !== 'none')
    throw new SettingsError(`host.json extensions.queues.messageEncoding must be "base64" or "none" (got "${encoding}")`);
  return {
    batchSize,
    // The extension's default outside Consumption: batchSize/2 per processor.
    newBatchThreshold: Math.max(
      0,
      Math.floor(readNumber(hostJson, 'extensions.queues.newBatchThreshold', Math.floor(batchSize / 2) * availableParallelism())),
    ),
    maxPollingIntervalMs: Math.max(100, readTimeSpanMs(hostJson, 'extensions.queues.maxPollingInterval', 60_000)),
    visibilityTimeoutMs: Math.max(0, readTimeSpanMs(hostJson, 'extensions.queues.visibilityTimeout', 0)),
    maxDequeueCount: Math.max(1, Math.floor(readNumber(hostJson, 'extensions.queues.maxDequeueCount', 5))),
    messageEncoding: encoding,
  };
}

/**
 * WEBSITE_TIME_ZONE must name an IANA zone. TZ is often set for other reasons (e.g. `:/etc/localtime`),
 * so a TZ that is not an IANA name is ignored with a warning rather than stopping the host.
 */
function timerTimeZone(settings: Readonly<Record<string, string | undefined>>, log: HostLogger): string {
  const website = getSetting(settings, 'WEBSITE_TIME_ZONE')?.trim();
  if (website !== undefined && website !== '') return validateTimeZone(website);
  const tz = getSetting(settings, 'TZ')?.trim();
  if (tz === undefined || tz === '') return 'Etc/UTC';
  try {
    return validateTimeZone(tz);
  } catch {
    log('warn', `TZ is "${tz}", not an IANA time zone name: timer schedules run in UTC`);
    return 'Etc/UTC';
  }
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolvePort, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      reject(err.code === 'EADDRINUSE' ? new Error(`Port ${port} is already in use; set PORT (or --port) to another port`) : err);
    });
    server.listen(port, host, () => {
      const address = server.address();
      resolvePort(typeof address === 'object' && address !== null ? address.port : port);
    });
  });
}

/**
 * Keeps the app's environment in step with the host's settings, and puts it back on stop. It is the
 * environment of Node's own process object, which the app sees even when a test runner sandboxes ours.
 */
function applyToProcessEnv(env: NodeJS.ProcessEnv, settings: Readonly<Record<string, string>>): () => void {
  const previous = new Map<string, string | undefined>();
  for (const [key, value] of Object.entries(settings)) {
    if (env[key] === value) continue;
    previous.set(key, env[key]);
    env[key] = value;
  }
  return () => {
    for (const [key, value] of previous) {
      if (value === undefined) Reflect.deleteProperty(env, key);
      else env[key] = value;
    }
  };
}

export async function startHost(options: StartHostOptions): Promise<RunningHost> {
  const startedAt = Date.now();
  const appRoot = resolve(options.appRoot);
  const log = options.log ?? consoleLogger({ quiet: options.quiet === true });
  const extensions = options.extensions ?? [];
  const local = readLocalSettings(appRoot);
  const appEnv = nativeProcess().env;
  const { settings, skipped } = mergeSettings(local.values, appEnv, options.env);
  for (const key of skipped)
    log('debug', `Skipping '${key}' from local settings as it's already defined in current environment variables.`);
  const runtime = getSetting(settings, 'FUNCTIONS_WORKER_RUNTIME');
  if (runtime !== undefined && runtime.toLowerCase() !== 'node')
    log('warn', `FUNCTIONS_WORKER_RUNTIME is "${runtime}"; the devhost runs Node.js apps only`);
  const restoreEnv = applyToProcessEnv(appEnv, settings);
  const cleanups: (() => void | Promise<void>)[] = [restoreEnv];
  const cleanup = async (): Promise<void> => {
    for (const c of cleanups.reverse()) await c();
  };

  try {
    const hostJson = loadHostJson(appRoot, settings);
    const clock =
      options.clock ?? (/^(true|1)$/i.test(getSetting(settings, 'DEVHOST_VIRTUAL_CLOCK') ?? '') ? new VirtualClock() : new RealClock());
    const pkg = readPackageJson(appRoot);
    const hostId = hostIdFor(appRoot, pkg.name, settings);

    const registry = new Registry((level, category, message) => log(fromRpcLevel(level), `[${category}] ${message}`));
    installCoreApi(registry);
    forgetApp(appRoot);
    await loadEntries(appRoot, entryFiles(appRoot, pkg), pkg);
    registry.locked = true;
    const capabilities = (await registry.programmingModel?.getCapabilities?.({})) ?? {};
    const httpUri = capabilities.HttpUri;

    const logHooks = registry.hooks.log;
    const invoker = new Invoker(registry, (functionName, invocationId, level, category, message) => {
      // Log hooks run first and may rewrite the level or message (LogHookContext has setters).
      const entry: Record<string, unknown> = { hookData: {}, level, category, message, invocationId };
      for (const hook of logHooks) {
        try {
          void hook(entry);
        } catch {
          // A failing log hook must not break the invocation that logged.
        }
      }
      log(fromRpcLevel(entry.level as typeof level), `[${functionName}] ${String(entry.message)}`);
    });

    // Index: resolve %Setting% per function; a function whose bindings cannot resolve is in error.
    const indexed: IndexedFunction[] = [...registry.functions.values()].map(({ metadata }) => {
      const trigger = Object.entries(metadata.bindings).find(([, b]) => /trigger$/i.test(b.type ?? ''));
      try {
        const bindings = resolveBindings(metadata, settings);
        const resolvedTrigger =
          trigger === undefined ? undefined : ([trigger[0], bindings[trigger[0]] as RpcBindingInfo] as [string, RpcBindingInfo]);
        return {
          metadata: { ...metadata, bindings },
          bindings,
          trigger: resolvedTrigger,
          disabled: isFunctionDisabled(settings, metadata.name),
          error: undefined,
        };
      } catch (err) {
        return { metadata, bindings: metadata.bindings, trigger, disabled: false, error: err instanceof Error ? err.message : String(err) };
      }
    });
    for (const f of indexed) if (f.error !== undefined) log('error', `The '${f.metadata.name}' function is in error: ${f.error}`);
    const live = indexed.filter((f) => f.error === undefined && !f.disabled);

    const storage = new StorageClients(settings);
    const queueSettings = queueOptions(hostJson);
    const queueListeners: QueueListener[] = [];
    const bindingIo = new BindingIo({
      storage,
      extensions,
      queueEncoding: queueSettings.messageEncoding,
      now: () => clock.now(),
      onQueueWrite: (name) => queueListeners.filter((l) => l.queueName === name).forEach((l) => l.notify()),
    });
    for (const f of live) {
      const missing = bindingIo.unsupported(f.metadata);
      if (missing.length > 0)
        log('warn', `Function '${f.metadata.name}': the devhost does not serve binding(s) ${missing.join(', ')}; they are ignored`);
    }

    const keys = KeyPolicy.fromSettings(settings);
    const routes = new FunctionRoutes(live.filter((f) => httpTrigger(f.metadata) !== undefined).map((f) => f.metadata));
    const routePrefix = readString(hostJson, 'extensions.http.routePrefix') ?? 'api';
    // DEVHOST_STREAM_FORWARDING=tcp forwards streamed requests over TCP like the real host (default: handed over in-process).
    const forwarding = (getSetting(settings, 'DEVHOST_STREAM_FORWARDING') ?? 'direct').toLowerCase();
    const streamProxy =
      typeof httpUri === 'string' && httpUri !== '' ? new StreamProxy(httpUri, { direct: forwarding !== 'tcp' }) : undefined;
    if (streamProxy !== undefined) cleanups.push(() => streamProxy.close());

    const timerListeners: TimerListener[] = [];
    const clockControl = new ClockControl(clock, invoker, () => [...extensions, ...timerListeners]);
    const server = createServer({ keepAliveTimeout: 5000 });
    // Requests that come before the host is ready are held, not left without a listener (they hung).
    const gate = new StartupGate();
    server.on('request', gate.handle);
    const port = await listen(
      server,
      options.port ?? Number(getSetting(settings, 'PORT') ?? local.localHttpPort ?? 7071),
      options.host ?? '127.0.0.1',
    );
    cleanups.push(
      () =>
        new Promise<void>((done) => {
          server.close(() => done());
          server.closeAllConnections();
        }),
    );
    // Runs before the server closes (cleanups run last first): held requests get their 503.
    cleanups.push(() => gate.refuse());
    const bindHost = options.host ?? '127.0.0.1';
    const baseUrl = `http://${bindHost === '0.0.0.0' || bindHost === '::' ? 'localhost' : bindHost.includes(':') ? `[${bindHost}]` : bindHost}:${port}`;
    const displayBase = bindHost === '127.0.0.1' ? `http://localhost:${port}` : baseUrl;
    const hostName = websiteHostname(settings, appEnv, port, options.hostnameLikeFuncStart !== false);
    cleanups.push(() => hostName.restore());

    const summaries: FunctionSummary[] = indexed.map((f) => {
      const [triggerName, trigger] = f.trigger ?? ['', { type: 'none' }];
      const route = routes.routes.find((r) => r.functionName === f.metadata.name);
      const http =
        trigger.type?.toLowerCase() === 'httptrigger'
          ? {
              route: typeof trigger.route === 'string' && trigger.route !== '' ? trigger.route : f.metadata.name,
              methods: Array.isArray(trigger.methods) ? (trigger.methods as unknown[]).map((m) => String(m).toUpperCase()) : [],
              authLevel: text(trigger.authLevel, 'anonymous'),
            }
          : undefined;
      const prefix = routePrefix.replace(/^\/+|\/+$/g, '');
      return {
        name: f.metadata.name,
        isDisabled: f.disabled,
        ...(f.error === undefined ? {} : { error: f.error }),
        trigger: { type: trigger.type ?? 'none', name: triggerName },
        ...(http === undefined
          ? {}
          : { http, invoke_url_template: `${displayBase}/${prefix === '' ? '' : `${prefix}/`}${route?.template.template ?? http.route}` }),
        config: { bindings: Object.entries(f.bindings).map(([name, b]) => ({ ...b, name })) },
      };
    });

    const extraInputs = (fn: FunctionMetadata) => (): Promise<RpcParameterBinding[]> => bindingIo.inputData(fn, {});
    const runNow = (name: string, input: string | undefined): Promise<boolean> => {
      const timer = timerListeners.find((t) => t.functionName === name);
      if (timer !== undefined) {
        void timer.fire(clock.now(), false);
        return Promise.resolve(true);
      }
      const queue = queueListeners.find((q) => q.functionName === name);
      if (queue === undefined) return Promise.resolve(false);
      void queue.runOnce(input ?? '', clock.now());
      return Promise.resolve(true);
    };

    const frontDoor = new HttpFrontDoor({
      routes,
      routePrefix,
      keys,
      cors: new CorsPolicy(local.cors, local.corsCredentials),
      invoker,
      bindings: bindingIo,
      extensions,
      adminRoutes: adminRoutes({ keys, clock, clockControl, functions: () => summaries, runNow, startedAt, hostId }),
      streamProxy,
      log,
      logInvocations: options.quiet !== true,
    });

    // appStart before any trigger fires or request is served (requests wait until listening below).
    const appHookData: Record<string, unknown> = {};
    for (const hook of registry.hooks.appStart) await hook({ hookData: appHookData, function: undefined });

    const services: HostServices = {
      functions: live.map((f) => f.metadata),
      invoker,
      clock,
      settings,
      hostJson,
      baseUrl,
      hostName: hostName.value,
      log,
      keys,
      storageConnectionString: (connection) => storage.connectionString(connection),
    };
    const startedExtensions: HostExtension[] = [];
    cleanups.push(async () => {
      for (const e of startedExtensions.reverse())
        await e.stop().catch((err: unknown) => log('error', `Extension ${e.name} failed to stop: ${String(err)}`));
    });
    for (const extension of extensions) {
      await extension.start(services);
      startedExtensions.push(extension);
    }

    // Timer triggers.
    const timeZone = timerTimeZone(settings, log);
    let statusStore: TimerStatusStore | undefined;
    const timerStore = (): TimerStatusStore => {
      if (statusStore !== undefined) return statusStore;
      try {
        statusStore = new BlobTimerStatusStore(storage.blobService(undefined), hostId);
      } catch {
        log('warn', 'AzureWebJobsStorage is not set: timer schedule status is kept in memory only (no isPastDue after downtime)');
        statusStore = new MemoryTimerStatusStore();
      }
      return statusStore;
    };
    for (const f of live) {
      const [triggerName, trigger] = f.trigger ?? ['', {}];
      if (trigger.type?.toLowerCase() !== 'timertrigger') continue;
      const schedule = parseSchedule(text(trigger.schedule), timeZone);
      const useMonitor = trigger.useMonitor === undefined ? schedule.minIntervalMs >= 60_000 : flag(trigger.useMonitor);
      timerListeners.push(
        new TimerListener({
          fn: f.metadata,
          triggerName,
          schedule,
          runOnStartup: flag(trigger.runOnStartup),
          useMonitor,
          clock,
          invoker,
          store: useMonitor ? timerStore() : new MemoryTimerStatusStore(),
          log,
          extraInputs: extraInputs(f.metadata),
        }),
      );
    }

    // Queue triggers.
    for (const f of live) {
      const [triggerName, trigger] = f.trigger ?? ['', {}];
      if (trigger.type?.toLowerCase() !== 'queuetrigger') continue;
      const connection = typeof trigger.connection === 'string' ? trigger.connection : undefined;
      const queueName = text(trigger.queueName).toLowerCase();
      const queue = await storage.queue(connection, queueName);
      queueListeners.push(
        new QueueListener({
          fn: f.metadata,
          triggerName,
          queueName,
          queue,
          poison: () => storage.queue(connection, `${queueName}-poison`),
          settings: queueSettings,
          invoker,
          bindings: bindingIo,
          log,
        }),
      );
    }

    gate.open(frontDoor.handle);
    for (const t of timerListeners) await t.start();
    for (const q of queueListeners) q.start();
    cleanups.push(() => timerListeners.forEach((t) => t.stop()));

    if (options.quiet !== true) {
      printFunctionTable(summaries, {
        log: (line) => log('info', line),
        extensions,
        metadata: (name) => live.find((f) => f.metadata.name === name)?.metadata,
      });
      log('info', `Host started (${Date.now() - startedAt} ms); listening on ${displayBase}${clock.virtual ? ' (virtual clock)' : ''}`);
    }

    let stopping: Promise<void> | undefined;
    const stop = (): Promise<void> =>
      (stopping ??= (async () => {
        frontDoor.stop();
        for (const t of timerListeners) t.stop();
        await Promise.all(queueListeners.map((q) => q.stop()));
        const drainMs = options.drainTimeoutMs ?? 30_000;
        const drained = await invoker.drain(drainMs);
        if (!drained) log('warn', `Stopped waiting for ${invoker.inFlight.size} invocation(s) after ${drainMs} ms`);
        await Promise.race([Promise.all(queueListeners.map((q) => q.finished())), new Promise((r) => setTimeout(r, 2000))]);
        for (const hook of registry.hooks.appTerminate) {
          try {
            await hook({ hookData: appHookData });
          } catch (err) {
            log('error', `appTerminate hook failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
          }
        }
        await cleanup();
      })());

    return {
      baseUrl,
      port,
      registry,
      invoker,
      clock,
      settings,
      hostName: hostName.value,
      hostJson,
      functions: summaries,
      masterKey: keys.masterKey,
      masterKeyGenerated: !keys.masterKeyConfigured,
      settle: () => clockControl.settle(),
      advanceClockTo: async (at) => {
        await clockControl.advanceTo(at);
      },
      stop,
    };
  } catch (err) {
    await cleanup();
    throw err;
  }
}
