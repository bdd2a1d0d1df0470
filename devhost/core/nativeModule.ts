/**
 * Node's own `Module` class. A test runner may hand out a subclass (jest does, to swap
 * `createRequire`); patching the subclass's prototype would miss every module Node itself loads, so
 * walk up to the real class.
 */
import Module from 'node:module';

export interface NativeModuleClass {
  new (id: string): { filename: string; paths: string[]; require(id: string): unknown };
  readonly prototype: { require: (this: unknown, id: string) => unknown };
  _cache: Record<string, unknown>;
  _nodeModulePaths(dir: string): string[];
  _resolveFilename(request: string, parent: unknown): string;
}

export function nativeModule(): NativeModuleClass {
  let current: unknown = Module;
  for (;;) {
    const parent: unknown = Object.getPrototypeOf(current);
    if (typeof parent !== 'function' || parent === Function.prototype || !('_load' in parent)) break;
    current = parent;
  }
  return current as NativeModuleClass;
}

/** The process object Node's own modules see (a test runner may give its sandbox a copy with its own `env`). */
export function nativeProcess(): NodeJS.Process {
  const Native = nativeModule();
  return new Native(__filename).require('node:process') as NodeJS.Process;
}
