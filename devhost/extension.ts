/**
 * How trigger providers plug into the devhost. HTTP, storage queues and timers are built in; the
 * Durable Functions engine is an extension of the same shape, as the Durable extension is for the
 * real host.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import type { HostClock } from './clock';
import type { Invoker } from './core/invoker';
import type { FunctionMetadata, RpcBindingInfo, RpcTypedData } from './core/types';
import type { KeyPolicy } from './http/keys';

export type HostLogLevel = 'debug' | 'info' | 'warn' | 'error';

export type HostLogger = (level: HostLogLevel, message: string) => void;

/** What the host offers every extension once the app has loaded. */
export interface HostServices {
  /**
   * The functions the host serves: bindings with `%Setting%` resolved, and functions that are disabled
   * (`AzureWebJobs.<name>.Disabled`) or in error left out, so an extension cannot run them either.
   */
  readonly functions: readonly FunctionMetadata[];
  readonly invoker: Invoker;
  readonly clock: HostClock;
  /** App settings: the process environment after local.settings.json `Values` were applied. */
  readonly settings: Readonly<Record<string, string | undefined>>;
  /** host.json with `%Setting%` expressions resolved and `AzureFunctionsJobHost__*` overrides applied. */
  readonly hostJson: Readonly<Record<string, unknown>>;
  /** The origin clients reach the host on, e.g. `http://localhost:7071` (no trailing slash). */
  readonly baseUrl: string;
  /**
   * WEBSITE_HOSTNAME, which the real host builds extension webhook URLs from (`localhost:7071` under
   * `func start`); undefined when the host has none.
   */
  readonly hostName: string | undefined;
  readonly log: HostLogger;
  /** The host's keys: extensions take their system key from here (`keys.systemKey(name)`). */
  readonly keys: KeyPolicy;
  /** The storage connection string behind a binding's `connection` setting (default AzureWebJobsStorage). */
  storageConnectionString(connection?: string): string;
}

export interface NamedBinding extends RpcBindingInfo {
  readonly name: string;
}

export interface HostExtension {
  readonly name: string;
  /** Binding types (compared case-insensitively) this extension serves, as triggers or as inputs. */
  readonly bindingTypes: readonly string[];
  start(host: HostServices): Promise<void>;
  /** Stop taking new work; finish or persist what is under way. */
  stop(): Promise<void>;
  /** Data for a non-trigger input binding this extension serves (e.g. `durableClient`), on any invocation. */
  inputData?(binding: NamedBinding, fn: FunctionMetadata): RpcTypedData | undefined;
  /** Serves host-level routes (e.g. the Durable HTTP API). Resolves false to let the host go on. */
  handleHttp?(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean>;
  /** The trigger column of the function table printed at start-up. */
  describe?(fn: FunctionMetadata): string | undefined;
  /** True when nothing is running or queued right now (a virtual-clock step waits for this). */
  idle?(): boolean;
}
