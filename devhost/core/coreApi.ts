/**
 * Provides the `@azure/functions-core` module the way the Node worker does: a hook on `require`
 * answers that one module id with the host's API object. `@azure/functions` resolves it once and
 * caches the answer (falling back to "test mode" for good if it is missing), so the hook must be in
 * place before anything loads `@azure/functions` — `installCoreApi` checks that and fails loudly.
 */

import type {
  Disposable,
  FunctionCallback,
  FunctionMetadata,
  HookCallback,
  HookName,
  ProgrammingModel,
  RpcLogCategory,
  RpcLogLevel,
} from './types';
import { nativeModule } from './nativeModule';

export interface RegisteredFunction {
  readonly metadata: FunctionMetadata;
  readonly callback: FunctionCallback;
}

export type SystemLogger = (level: RpcLogLevel, category: RpcLogCategory, message: string) => void;

class CoreDisposable implements Disposable {
  #dispose: (() => void) | undefined;

  constructor(dispose: () => void) {
    this.#dispose = dispose;
  }

  static from(...items: Disposable[]): CoreDisposable {
    return new CoreDisposable(() => items.forEach((d) => d.dispose()));
  }

  dispose(): void {
    this.#dispose?.();
    this.#dispose = undefined;
  }
}

/** What the app registered while it loaded: functions, hooks and the programming model. */
export class Registry {
  readonly functions = new Map<string, RegisteredFunction>();
  readonly hooks: Record<HookName, HookCallback[]> = {
    preInvocation: [],
    postInvocation: [],
    appStart: [],
    appTerminate: [],
    log: [],
  };
  programmingModel: ProgrammingModel | undefined;
  /** Registration closes once the app has loaded, as in the real worker. */
  locked = false;

  constructor(public systemLog: SystemLogger = () => undefined) {}

  byName(name: string): RegisteredFunction | undefined {
    const exact = this.functions.get(name);
    if (exact !== undefined) return exact;
    const lower = name.toLowerCase();
    for (const [key, fn] of this.functions) if (key.toLowerCase() === lower) return fn;
    return undefined;
  }

  /** The object `require('@azure/functions-core')` returns. */
  coreApi(): Record<string, unknown> {
    return createCoreApi(this);
  }
}

function createCoreApi(registry: Registry): Record<string, unknown> {
  return {
    version: '3.10.1-devhost',
    get hostVersion() {
      return '4.1040.0-devhost';
    },
    registerFunction(metadata: FunctionMetadata, callback: FunctionCallback): Disposable {
      if (registry.locked) throw new Error(`A function can't be registered after the app has started (${metadata.name}).`);
      const key = metadata.functionId ?? metadata.name;
      if ([...registry.functions.keys()].some((k) => k.toLowerCase() === key.toLowerCase())) {
        throw new Error(`A function with the name "${metadata.name}" has already been registered.`);
      }
      registry.functions.set(key, { metadata, callback });
      return new CoreDisposable(() => registry.functions.delete(key));
    },
    setProgrammingModel(model: ProgrammingModel): void {
      registry.programmingModel = model;
    },
    getProgrammingModel(): ProgrammingModel | undefined {
      return registry.programmingModel;
    },
    registerHook(name: string, callback: HookCallback): Disposable {
      if (!(name in registry.hooks)) {
        const error = new RangeError(`Unrecognized hook "${name}"`) as RangeError & { isAzureFunctionsSystemError: boolean };
        error.isAzureFunctionsSystemError = true;
        throw error;
      }
      const list = registry.hooks[name as HookName];
      list.push(callback);
      return new CoreDisposable(() => {
        const at = list.indexOf(callback);
        if (at >= 0) list.splice(at, 1);
      });
    },
    log(level: RpcLogLevel, category: RpcLogCategory, message: string): void {
      registry.systemLog(level, category, message);
    },
    Disposable: CoreDisposable,
  };
}

const coreModuleId = '@azure/functions-core';
const installed = Symbol.for('devhost.coreApi');

type RequireFunction = (this: unknown, id: string) => unknown;

/** Node's own module cache (`require.cache` is a test runner's registry when one is in charge). */
function loadedFunctionsLibrary(): string | undefined {
  const cache = nativeModule()._cache;
  return Object.keys(cache).find((file) => /[\\/]node_modules[\\/]@azure[\\/]functions[\\/]/.test(file));
}

/**
 * Answers `require('@azure/functions-core')` with the registry's API for the rest of the process.
 * Throws if `@azure/functions` is already loaded: it would have cached "no host" and skipped
 * every registration.
 */
export function installCoreApi(registry: Registry): void {
  const prototype = nativeModule().prototype as unknown as { require: RequireFunction; [installed]?: Registry };
  if (prototype[installed] !== undefined) {
    prototype[installed] = registry;
    return;
  }
  const early = loadedFunctionsLibrary();
  if (early !== undefined) {
    throw new Error(
      `@azure/functions was loaded before the devhost could provide @azure/functions-core (${early}). ` +
        'It has switched to test mode and would skip every registration: start the app through the devhost, ' +
        'and do not import @azure/functions before it.',
    );
  }
  const original = prototype.require;
  prototype[installed] = registry;
  const api = new Map<Registry, Record<string, unknown>>();
  prototype.require = function (this: unknown, id: string): unknown {
    if (id === coreModuleId) {
      const current = prototype[installed] as Registry;
      let value = api.get(current);
      if (value === undefined) {
        value = current.coreApi();
        api.set(current, value);
      }
      return value;
    }
    return original.call(this, id);
  };
}
