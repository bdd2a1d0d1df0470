/**
 * The HTTP-triggered functions as a routing table: `/{routePrefix}/{route ?? functionName}`, most
 * specific template first, methods compared case-insensitively (no methods = any method).
 */
import type { FunctionMetadata, RpcBindingInfo } from '../core/types';
import { bindingOfType, text } from '../core/values';
import type { AuthLevel } from '../keys';
import { compareTemplates, RouteTemplate } from './routeTemplate';

export interface HttpRoute {
  readonly functionName: string;
  readonly metadata: FunctionMetadata;
  readonly triggerName: string;
  readonly template: RouteTemplate;
  /** Upper-case methods; empty means every method. */
  readonly methods: readonly string[];
  readonly authLevel: AuthLevel;
}

export type RouteLookup =
  { readonly kind: 'found'; readonly route: HttpRoute; readonly params: Record<string, string> } | { readonly kind: 'none' };

function authLevelOf(binding: RpcBindingInfo): AuthLevel {
  const level = text(binding.authLevel, 'anonymous').toLowerCase();
  // `system` and `user` keys do not exist locally; treat them like the admin key.
  if (level === 'function') return 'function';
  if (level === 'anonymous') return 'anonymous';
  return 'admin';
}

export function httpTrigger(fn: FunctionMetadata): [string, RpcBindingInfo] | undefined {
  return bindingOfType(fn, 'httpTrigger');
}

export class FunctionRoutes {
  readonly routes: readonly HttpRoute[];

  constructor(functions: readonly FunctionMetadata[]) {
    const routes: HttpRoute[] = [];
    for (const fn of functions) {
      const trigger = httpTrigger(fn);
      if (trigger === undefined) continue;
      const [triggerName, binding] = trigger;
      const route = typeof binding.route === 'string' && binding.route.trim() !== '' ? binding.route : fn.name;
      const methods = Array.isArray(binding.methods) ? (binding.methods as unknown[]).map((m) => String(m).toUpperCase()) : [];
      routes.push({
        functionName: fn.name,
        metadata: fn,
        triggerName,
        template: new RouteTemplate(route),
        methods,
        authLevel: authLevelOf(binding),
      });
    }
    this.routes = routes.sort((a, b) => compareTemplates(a.template, b.template));
  }

  /** The route for this method and path; a path served only for other methods is not found (the real host's 404). */
  find(method: string, path: string): RouteLookup {
    const upper = method.toUpperCase();
    for (const route of this.routes) {
      if (route.methods.length > 0 && !route.methods.includes(upper)) continue;
      const match = route.template.match(path);
      if (match !== undefined) return { kind: 'found', route, params: match.params };
    }
    return { kind: 'none' };
  }
}
