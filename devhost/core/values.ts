import type { FunctionMetadata, RpcBindingInfo } from './types';

/** The function's binding of `type` (compared without regard to case), with its name. */
export function bindingOfType(fn: FunctionMetadata, type: string): [string, RpcBindingInfo] | undefined {
  const wanted = type.toLowerCase();
  return Object.entries(fn.bindings).find(([, b]) => b.type?.toLowerCase() === wanted);
}

/** Binding options arrive untyped (`unknown`); these read them as the host's JSON binder would. */
export function text(value: unknown, fallback = ''): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return fallback;
}

export function flag(value: unknown): boolean {
  return value === true || (typeof value === 'string' && value.trim().toLowerCase() === 'true');
}
