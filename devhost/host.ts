/**
 * `startHost` loads a v4 Node app the way the Functions host and Node worker do and serves it through
 * providers (provider.ts): the extensions it is given (e.g. Durable Functions), then HTTP, timer and
 * storage-queue triggers. `stopHost` undoes it.
 *
 * Start-up, in the real host's order: settings (environment over local.settings.json), host.json, the
 * app's entry points, the HTTP port (requests held until ready), `appStart` hooks, the providers.
 * Stop: every provider pauses (new requests get 503, timers and polling stop), in-flight invocations
 * drain, `appTerminate` hooks run, the providers stop in reverse order.
 */
import { resolve } from 'node:path';

import { adminRoutes } from './admin';
import { type AppEnvironment, openEnvironment } from './app/environment';
import { type LoadedApp, loadApp } from './app/functions';
import { type HostConfig, readHostConfig } from './app/hostConfig';
import { websiteHostname } from './app/hostname';
import { installedVersion } from './app/loader';
import { getSetting } from './app/settings';
import { BindingIo } from './bindings/bindingIo';
import { StorageClients } from './bindings/storage';
import { type HostClock, RealClock, VirtualClock } from './clock';
import { ClockControl } from './clockControl';
import type { Registry } from './core/coreApi';
import type { Invoker } from './core/invoker';
import { type FunctionSummary, printFunctionTable, summarize } from './functionTable';
import { CorsPolicy } from './http/cors';
import { HttpProvider } from './http/httpProvider';
import { KeyPolicy } from './keys';
import { consoleLogger, type HostLogger } from './log';
import type { HostProvider, HostServices } from './provider';
import { requestTracing } from './telemetry/requestSpans';
import { QueueProvider } from './triggers/queueProvider';
import { TimerProvider } from './triggers/timerProvider';
import { libraries, versionReport } from './versions';

export interface StartHostOptions {
  /** The app's folder (its package.json `main` names the entry points). */
  readonly appRoot: string;
  /** HTTP port; 0 picks a free one. Default: the PORT setting, else local.settings.json Host.LocalHttpPort, else 7071. */
  readonly port?: number;
  /** Address to listen on (default 127.0.0.1). */
  readonly host?: string;
  /** Settings that win over the environment and local.settings.json (undefined removes one). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Providers beyond HTTP, timers and queues (the CLI passes defaultExtensions(): Durable Functions). */
  readonly extensions?: readonly HostProvider[];
  /** Default: a VirtualClock when DEVHOST_VIRTUAL_CLOCK=true (from DEVHOST_VIRTUAL_CLOCK_START, else now), else the real clock. */
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
  readonly config: HostConfig;
  readonly functions: readonly FunctionSummary[];
  /** The master key `/admin/*` needs: FUNCTIONS_ADMIN_KEY, or one made up for this run. */
  readonly masterKey: string;
  /** True when the master key was made up for this run (no FUNCTIONS_ADMIN_KEY). */
  readonly masterKeyGenerated: boolean;
  /** Whether function-level routes want a key (FUNCTIONS_KEY or FUNCTIONS_ADMIN_KEY set). */
  readonly keysEnforced: boolean;
  /** Waits until no background invocation runs and every provider is idle. */
  settle(): Promise<void>;
  /** Moves a virtual clock to `at` in steps (fails on a real clock). */
  advanceClockTo(at: number): Promise<void>;
  stop(): Promise<void>;
}

/** What `stopHost` takes apart. */
interface Running {
  readonly app: LoadedApp;
  readonly providers: readonly HostProvider[];
  readonly hookData: Record<string, unknown>;
  readonly log: HostLogger;
  readonly drainTimeoutMs: number;
  /** Puts back what start changed outside the providers (process environment, WEBSITE_HOSTNAME). */
  readonly release: () => Promise<void>;
}

function hostClock(settings: AppEnvironment['settings']): HostClock {
  if (!/^(true|1)$/i.test(getSetting(settings, 'DEVHOST_VIRTUAL_CLOCK') ?? '')) return new RealClock();
  // Where the virtual clock starts (an ISO time): a test can restart a host "later" without waiting.
  const start = getSetting(settings, 'DEVHOST_VIRTUAL_CLOCK_START');
  if (start === undefined || start === '') return new VirtualClock();
  const at = Date.parse(start);
  if (Number.isNaN(at)) throw new Error(`DEVHOST_VIRTUAL_CLOCK_START is not an ISO time: ${start}`);
  return new VirtualClock(at);
}

/** One line on the versions parity was recorded with, and a warning per library the app loads at another. */
function reportVersions(appRoot: string, log: HostLogger): void {
  const installed = Object.fromEntries(libraries.map((name) => [name, installedVersion(appRoot, name)]));
  const { line, warnings } = versionReport(installed as Parameters<typeof versionReport>[0]);
  log('info', line);
  for (const warning of warnings) log('warn', warning);
}

/** Starts each provider in order; when one fails, those already started are stopped and the error goes on. */
async function startProviders(providers: readonly HostProvider[], services: HostServices): Promise<void> {
  const started: HostProvider[] = [];
  try {
    for (const provider of providers) {
      await provider.start(services);
      started.push(provider);
    }
  } catch (err) {
    await stopProviders(started, services.log);
    throw err;
  }
}

async function stopProviders(providers: readonly HostProvider[], log: HostLogger): Promise<void> {
  for (const provider of [...providers].reverse())
    await provider.stop().catch((err: unknown) => log('error', `Provider ${provider.name} failed to stop: ${String(err)}`));
}

interface Assembly {
  readonly tracing: ReturnType<typeof requestTracing>;
  readonly config: HostConfig;
  readonly clock: HostClock;
  readonly keys: KeyPolicy;
  readonly environment: AppEnvironment;
  readonly log: HostLogger;
  readonly startedAt: number;
}

/** The providers for one start, wired to each other: extensions first, then HTTP, timers and queues. */
function assemble(app: LoadedApp, context: Assembly, options: StartHostOptions) {
  const { config, clock, keys, environment, log } = context;
  const providers: HostProvider[] = [];
  const queues = new QueueProvider();
  const storage = new StorageClients(environment.settings);
  const bindings = new BindingIo({
    storage,
    providers: () => providers,
    queueEncoding: config.queues.messageEncoding,
    now: () => clock.now(),
    onQueueWrite: (queueName) => queues.notify(queueName),
  });
  const clockControl = new ClockControl(
    clock,
    app.invoker,
    () => providers,
    (line) => log('warn', line),
  );
  const listed: { summaries: readonly FunctionSummary[] } = { summaries: [] };
  const http = new HttpProvider({
    cors: new CorsPolicy(environment.local.cors, environment.local.corsCredentials),
    admin: adminRoutes({
      keys,
      clock,
      clockControl,
      functions: () => listed.summaries,
      runNow: (name, input) => providers.some((p) => p.runNow?.(name, input) === true),
      startedAt: context.startedAt,
      hostId: app.hostId,
    }),
    providers: () => providers,
    streamUri: app.httpUri,
    logInvocations: options.quiet !== true,
    tracing: context.tracing,
  });
  providers.push(...(options.extensions ?? []), http, new TimerProvider(), queues);
  for (const fn of app.live) {
    const missing = bindings.unsupported(fn);
    if (missing.length > 0)
      log('warn', `Function '${fn.name}': the devhost does not serve binding(s) ${missing.join(', ')}; they are ignored`);
  }
  return { providers, http, storage, bindings, clockControl, listed };
}

export async function startHost(options: StartHostOptions): Promise<RunningHost> {
  const startedAt = Date.now();
  const appRoot = resolve(options.appRoot);
  const log = options.log ?? consoleLogger({ quiet: options.quiet === true });
  const environment = openEnvironment(appRoot, options.env, log);
  const undo: (() => void | Promise<void>)[] = [() => environment.restore()];
  const release = async (): Promise<void> => {
    for (const step of undo.splice(0).reverse()) await step();
  };
  try {
    // 1. The app: host.json, then its code and functions, loaded as the worker loads them.
    const { settings, local } = environment;
    const config = readHostConfig(appRoot, settings);
    const clock = options.clock ?? hostClock(settings);
    reportVersions(appRoot, log);
    const app = await loadApp(appRoot, settings, log);
    const keys = KeyPolicy.fromSettings(settings);
    // The host's request spans (when the settings export traces): the last thing stopped, so every request's span is sent.
    const tracing = requestTracing(settings, log);
    undo.push(() => tracing.shutdown());
    const { providers, http, storage, bindings, clockControl, listed } = assemble(
      app,
      { config, clock, keys, environment, log, startedAt, tracing },
      options,
    );

    // 2. The port opens and holds requests until the providers have started.
    undo.push(() => http.stop());
    const port = options.port ?? Number(getSetting(settings, 'PORT') ?? local.localHttpPort ?? 7071);
    const address = await http.listen(port, options.host ?? '127.0.0.1');
    const hostName = websiteHostname(settings, environment.env, address.port, options.hostnameLikeFuncStart !== false);
    undo.push(() => hostName.restore());

    // 3. The app's appStart hooks, then every provider, in order.
    const hookData: Record<string, unknown> = {};
    for (const hook of app.registry.hooks.appStart) await hook({ hookData, function: undefined });
    const services: HostServices = {
      functions: app.live,
      invoker: app.invoker,
      clock,
      settings,
      config,
      baseUrl: address.baseUrl,
      hostName: hostName.value,
      hostId: app.hostId,
      log,
      keys,
      storage,
      bindings,
    };
    await startProviders(providers, services);
    listed.summaries = app.indexed.map((f) => summarize(f, (name, route) => http.invokeUrl(name, route)));
    if (options.quiet !== true) {
      printFunctionTable(listed.summaries, {
        log: (line) => log('info', line),
        providers,
        metadata: (name) => app.live.find((f) => f.name === name),
      });
      log(
        'info',
        `Host started (${Date.now() - startedAt} ms); listening on ${address.displayBase}${clock.virtual ? ' (virtual clock)' : ''}`,
      );
    }

    const running: Running = { app, providers, hookData, log, drainTimeoutMs: options.drainTimeoutMs ?? 30_000, release };
    let stopping: Promise<void> | undefined;
    return {
      baseUrl: address.baseUrl,
      port: address.port,
      registry: app.registry,
      invoker: app.invoker,
      clock,
      settings,
      hostName: hostName.value,
      config,
      functions: listed.summaries,
      masterKey: keys.masterKey,
      masterKeyGenerated: !keys.masterKeyConfigured,
      keysEnforced: keys.enforced,
      settle: () => clockControl.settle(),
      advanceClockTo: async (at) => {
        await clockControl.advanceTo(at);
      },
      stop: () => (stopping ??= stopHost(running)),
    };
  } catch (err) {
    await release();
    throw err;
  }
}

/**
 * Stops a host: every provider pauses (new requests get 503, timers and queue polling stop),
 * in-flight invocations drain (up to `drainTimeoutMs`), the app's `appTerminate` hooks run, then the
 * providers stop in reverse order and the environment is put back.
 */
async function stopHost(running: Running): Promise<void> {
  const { app, providers, log } = running;
  for (const provider of providers) await provider.pause?.();
  if (!(await app.invoker.drain(running.drainTimeoutMs)))
    log('warn', `Stopped waiting for ${app.invoker.inFlight.size} invocation(s) after ${running.drainTimeoutMs} ms`);
  for (const hook of app.registry.hooks.appTerminate) {
    try {
      await hook({ hookData: running.hookData });
    } catch (err) {
      log('error', `appTerminate hook failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    }
  }
  await stopProviders(providers, log);
  await running.release();
}
