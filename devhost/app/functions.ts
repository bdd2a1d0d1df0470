/**
 * The app as the host indexes it: its entry points loaded (as the Node worker loads them) and each
 * function's bindings with `%Setting%` resolved. A function whose bindings cannot resolve is in
 * error and a disabled one is listed but not served, as on the real host.
 */
import { createHash } from 'node:crypto';
import { basename, resolve } from 'node:path';

import { installCoreApi, Registry } from '../core/coreApi';
import { Invoker } from '../core/invoker';
import type { FunctionMetadata, RpcBindingInfo } from '../core/types';
import { fromRpcLevel, type HostLogger } from '../log';
import { entryFiles, forgetApp, loadEntries, readPackageJson } from './loader';
import { getSetting, isFunctionDisabled, resolveSettingExpressions, type Settings } from './settings';

export interface IndexedFunction {
  readonly metadata: FunctionMetadata;
  /** Bindings with `%Setting%` resolved (the library keeps the raw ones, as with the real worker). */
  readonly bindings: Record<string, RpcBindingInfo>;
  readonly trigger: [string, RpcBindingInfo] | undefined;
  readonly disabled: boolean;
  readonly error: string | undefined;
}

export interface LoadedApp {
  readonly registry: Registry;
  readonly invoker: Invoker;
  /** Every function the app registered, in registration order. */
  readonly indexed: readonly IndexedFunction[];
  /** The ones the host serves: not disabled, not in error. */
  readonly live: readonly FunctionMetadata[];
  /** Names this app's state in storage (timer status): AzureFunctionsWebHost__hostid, else derived from the app. */
  readonly hostId: string;
  /** Where the library's HTTP stream proxy listens, when the app turned streaming on. */
  readonly httpUri: string | undefined;
}

const nonResolvedKeys = new Set(['name', 'type', 'direction']);

function resolveBindings(fn: FunctionMetadata, settings: Settings): Record<string, RpcBindingInfo> {
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

/**
 * The host keeps `/admin` for its own API: an HTTP route (or, without one, a function name) that
 * starts with `admin` puts the function in error, whatever the route prefix (devhost/docs/real-host.md#routing).
 */
function refuseReservedRoute(fn: FunctionMetadata, bindings: Record<string, RpcBindingInfo>): void {
  const http = Object.values(bindings).find((b) => b.type?.toLowerCase() === 'httptrigger');
  if (http === undefined) return;
  const route = typeof http.route === 'string' && http.route.trim() !== '' ? http.route : fn.name;
  if (/^\/?admin/i.test(route.trim())) throw new Error('The specified route conflicts with one or more built in routes.');
}

function index(metadata: FunctionMetadata, settings: Settings): IndexedFunction {
  const trigger = Object.entries(metadata.bindings).find(([, b]) => /trigger$/i.test(b.type ?? ''));
  try {
    const bindings = resolveBindings(metadata, settings);
    refuseReservedRoute(metadata, bindings);
    const resolvedTrigger =
      trigger === undefined ? undefined : ([trigger[0], bindings[trigger[0]] as RpcBindingInfo] as [string, RpcBindingInfo]);
    const disabled = isFunctionDisabled(settings, metadata.name);
    return { metadata: { ...metadata, bindings }, bindings, trigger: resolvedTrigger, disabled, error: undefined };
  } catch (err) {
    return { metadata, bindings: metadata.bindings, trigger, disabled: false, error: err instanceof Error ? err.message : String(err) };
  }
}

function hostIdFor(appRoot: string, appName: string | undefined, settings: Settings): string {
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

/**
 * Loads the app: the `@azure/functions-core` hook, its entry points, `getCapabilities` (which locks
 * `app.setup` and starts the library's HTTP stream proxy when streaming is on), then the index.
 */
export async function loadApp(appRoot: string, settings: Settings, log: HostLogger): Promise<LoadedApp> {
  const pkg = readPackageJson(appRoot);
  const registry = new Registry((level, category, message) => log(fromRpcLevel(level), `[${category}] ${message}`));
  installCoreApi(registry);
  forgetApp(appRoot);
  await loadEntries(appRoot, entryFiles(appRoot, pkg), pkg);
  registry.locked = true;
  const capabilities = (await registry.programmingModel?.getCapabilities?.({})) ?? {};
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
  const indexed = [...registry.functions.values()].map(({ metadata }) => index(metadata, settings));
  for (const f of indexed) if (f.error !== undefined) log('error', `The '${f.metadata.name}' function is in error: ${f.error}`);
  const httpUri = capabilities.HttpUri;
  return {
    registry,
    invoker,
    indexed,
    live: indexed.filter((f) => f.error === undefined && !f.disabled).map((f) => f.metadata),
    hostId: hostIdFor(appRoot, pkg.name, settings),
    httpUri: typeof httpUri === 'string' && httpUri !== '' ? httpUri : undefined,
  };
}
