/**
 * The host's function list: what `GET /admin/functions` answers, and the table `func start` prints
 * once the host is up, with each trigger described by the provider that serves it.
 */
import type { IndexedFunction } from './app/functions';
import type { FunctionMetadata, RpcBindingInfo } from './core/types';
import { text } from './core/values';
import type { HostProvider } from './provider';

export interface FunctionSummary {
  readonly name: string;
  readonly isDisabled: boolean;
  /** Why the host could not index the function (e.g. an unset %Setting%), if it could not. */
  readonly error?: string;
  readonly trigger: { readonly type: string; readonly name: string };
  readonly invoke_url_template?: string;
  readonly http?: { readonly route: string; readonly methods: readonly string[]; readonly authLevel: string };
  readonly config: { readonly bindings: readonly (RpcBindingInfo & { name: string })[] };
}

/** `invokeUrl(functionName, route)`: the URL template an HTTP function is invoked at. */
export function summarize(f: IndexedFunction, invokeUrl: (functionName: string, route: string) => string): FunctionSummary {
  const [triggerName, trigger] = f.trigger ?? ['', { type: 'none' }];
  const http =
    trigger.type?.toLowerCase() === 'httptrigger'
      ? {
          route: typeof trigger.route === 'string' && trigger.route !== '' ? trigger.route : f.metadata.name,
          methods: Array.isArray(trigger.methods) ? (trigger.methods as unknown[]).map((m) => String(m).toUpperCase()) : [],
          authLevel: text(trigger.authLevel, 'anonymous'),
        }
      : undefined;
  return {
    name: f.metadata.name,
    isDisabled: f.disabled,
    ...(f.error === undefined ? {} : { error: f.error }),
    trigger: { type: trigger.type ?? 'none', name: triggerName },
    ...(http === undefined ? {} : { http, invoke_url_template: invokeUrl(f.metadata.name, http.route) }),
    config: { bindings: Object.entries(f.bindings).map(([name, b]) => ({ ...b, name })) },
  };
}

export interface TableOptions {
  readonly log: (line: string) => void;
  readonly providers: readonly HostProvider[];
  readonly metadata: (name: string) => FunctionMetadata | undefined;
}

function detail(f: FunctionSummary, options: TableOptions): string {
  if (f.error !== undefined) return `[error] ${f.error}`;
  if (f.isDisabled) return `${f.trigger.type} [disabled]`;
  const metadata = options.metadata(f.name);
  const described = metadata === undefined ? undefined : options.providers.map((p) => p.describe?.(metadata)).find((d) => d !== undefined);
  if (described !== undefined) return described;
  const served = options.providers.some((p) => p.bindingTypes.some((t) => t.toLowerCase() === f.trigger.type.toLowerCase()));
  return served ? f.trigger.type : `${f.trigger.type} [not supported by the devhost: never triggered]`;
}

export function printFunctionTable(functions: readonly FunctionSummary[], options: TableOptions): void {
  options.log('');
  options.log('Functions:');
  options.log('');
  if (functions.length === 0) options.log('\tNo functions registered: check that package.json "main" points at the built entry files.');
  for (const f of functions) options.log(`\t${f.name}: ${detail(f, options)}`);
  options.log('');
}
