/**
 * How triggers plug into the devhost. HTTP, storage queues, timers and Durable Functions are each a
 * provider of this one shape, as the real host's triggers are each an extension of the WebJobs host:
 * `startHost` starts them in order once the app has loaded, and `stopHost` pauses them all, drains
 * in-flight invocations, then stops them in reverse. An extension (`startHost({ extensions })`) is a
 * provider the host does not build in.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import type { HostConfig } from './app/hostConfig';
import type { Settings } from './app/settings';
import type { BindingIo } from './bindings/bindingIo';
import type { StorageClients } from './bindings/storage';
import type { HostClock } from './clock';
import type { Invoker } from './core/invoker';
import type { FunctionMetadata, NamedBinding, RpcTypedData } from './core/types';
import type { KeyPolicy } from './keys';
import type { HostLogger } from './log';

/** What the host offers every provider once the app has loaded. */
export interface HostServices {
  /**
   * The functions the host serves: bindings with `%Setting%` resolved, and functions that are disabled
   * (`AzureWebJobs.<name>.Disabled`) or in error left out, so a provider cannot run them either.
   */
  readonly functions: readonly FunctionMetadata[];
  readonly invoker: Invoker;
  readonly clock: HostClock;
  /** App settings: the process environment after local.settings.json `Values` were applied. */
  readonly settings: Settings;
  /** host.json, checked, with defaults (`config.json`: the whole file as the host applies it). */
  readonly config: HostConfig;
  /** The origin clients reach the host on, e.g. `http://localhost:7071` (no trailing slash). */
  readonly baseUrl: string;
  /**
   * WEBSITE_HOSTNAME, which the real host builds extension webhook URLs from (`localhost:7071` under
   * `func start`); undefined when the host has none.
   */
  readonly hostName: string | undefined;
  /** Names this host's state in storage (timer schedule status). */
  readonly hostId: string;
  readonly log: HostLogger;
  /** The host's keys: providers take their system key from here (`keys.systemKey(name)`). */
  readonly keys: KeyPolicy;
  /** Storage accounts behind `connection` settings (default AzureWebJobsStorage). */
  readonly storage: StorageClients;
  /** A function's other inputs and its outputs (blob, queue, and what providers serve). */
  readonly bindings: BindingIo;
}

export interface HostProvider {
  readonly name: string;
  /** Binding types (compared case-insensitively) this provider serves, as triggers or as inputs. */
  readonly bindingTypes: readonly string[];
  start(host: HostServices): Promise<void>;
  /** The first step of a stop: take no new work. In-flight invocations are drained once every provider has paused. */
  pause?(): Promise<void>;
  /** After the drain and the app's `appTerminate` hooks: finish or persist what is under way, let go of what was opened. */
  stop(): Promise<void>;
  /** Data for a non-trigger input binding this provider serves (e.g. `durableClient`), on any invocation. */
  inputData?(binding: NamedBinding, fn: FunctionMetadata): RpcTypedData | undefined;
  /** Serves host-level routes on the public port (e.g. the Durable webhooks). Resolves false to let the host go on. */
  handleHttp?(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean>;
  /** The trigger column of the function table printed at start-up. */
  describe?(fn: FunctionMetadata): string | undefined;
  /** True when nothing is running or queued right now (a virtual-clock step waits for this). */
  idle?(): boolean;
  /** Runs a function this provider triggers once, now (the admin API); false when it triggers no function of that name. */
  runNow?(functionName: string, input: string | undefined): boolean;
}
