/**
 * What the host's admin API lists of the app's functions (`GET /admin/functions`, master key), read
 * the way the real host answers it: each function's `config.bindings`, where an HTTP trigger carries
 * its route, methods and auth level (seen on host 4.1037: devhost/docs/real-host.md#admin-api).
 */
import type { E2eHost } from './harness';
import { requestJson } from './http';

interface Binding {
  readonly type: string;
  readonly route?: string;
  readonly methods?: readonly string[];
  readonly authLevel?: string;
}

interface FunctionMetadata {
  readonly name: string;
  readonly config: { readonly bindings: readonly Binding[] };
}

export interface RegisteredFunction {
  readonly name: string;
  /** The HTTP trigger, for HTTP functions. */
  readonly http?: { readonly route: string; readonly methods: readonly string[]; readonly authLevel: string };
}

export async function registeredFunctions(host: E2eHost): Promise<RegisteredFunction[]> {
  const res = await requestJson<FunctionMetadata[]>(host, 'GET', '/admin/functions', { key: 'admin' });
  if (res.status !== 200) throw new Error(`GET /admin/functions answered ${res.status}`);
  return res.body.map((f) => {
    const trigger = f.config.bindings.find((b) => b.type === 'httpTrigger');
    if (trigger === undefined) return { name: f.name };
    return {
      name: f.name,
      http: { route: trigger.route ?? f.name, methods: trigger.methods ?? [], authLevel: trigger.authLevel ?? 'function' },
    };
  });
}
