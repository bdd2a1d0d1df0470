/**
 * A TemplateModel read from the ARM JSON that `bicep build` emits: every resource of every nested
 * (module) deployment, in either language version (resources as an array, or keyed by symbolic
 * name). Expressions stay text, with template variables and the module call's string arguments
 * inlined, so a role assignment reads `subscriptionResourceId('…/roleDefinitions', '<guid>')` and
 * its name reads in main.bicep's terms, as in the Bicep model.
 */
import { armExpressionValue } from './armExpression';
import { type OutputView, type ParamView, type ResourceView, type TemplateModel, type Value } from './templateModel';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

interface ArmTemplate {
  readonly parameters?: Record<string, { readonly defaultValue?: Json }>;
  readonly variables?: Record<string, Json>;
  readonly resources?: Json[] | Record<string, Json>;
  readonly outputs?: Record<string, { readonly value?: Json }>;
}

const isRecord = (v: Json | undefined): v is { [key: string]: Json } => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A template's view of names: its variables, and what its caller passed for each parameter. */
interface Scope {
  readonly variables: Record<string, Json>;
  /** Parameter → the caller's argument as expression text in the caller's terms (`'literal'` or an expression). */
  readonly args: ReadonlyMap<string, string>;
}

const expressionText = (json: string): string | undefined =>
  json.startsWith('[') && !json.startsWith('[[') && json.endsWith(']') ? json.slice(1, -1) : undefined;

const quoted = (text: string): string => `'${text.replace(/'/g, "''")}'`;

/** Inlines variables (literal or computed) and the caller's arguments, so the text reads in main's terms. */
function inline(text: string, scope: Scope): string {
  const withVariables = text.replace(/variables\('([^']+)'\)((?:\.\w+)*)/g, (whole, name: string, members: string) => {
    let value: Json | undefined = scope.variables[name];
    for (const member of members.split('.').filter((m) => m !== '')) value = isRecord(value) ? value[member] : undefined;
    if (typeof value !== 'string') return whole;
    const inner = expressionText(value);
    return inner === undefined ? quoted(value.startsWith('[[') ? value.slice(1) : value) : inline(inner, scope);
  });
  return withVariables.replace(/parameters\('([^']+)'\)/g, (whole, name: string) => scope.args.get(name) ?? whole);
}

function toValue(json: Json, scope: Scope): Value {
  if (typeof json === 'string') {
    const inner = expressionText(json);
    if (inner !== undefined) return armExpressionValue(inline(inner, scope));
    return json.startsWith('[[') ? json.slice(1) : json;
  }
  if (Array.isArray(json)) return json.map((item) => toValue(item, scope));
  if (isRecord(json)) return Object.fromEntries(Object.entries(json).map(([k, v]) => [k, toValue(v, scope)]));
  return json;
}

/** What a module call passes to its template: string arguments, as text in the caller's terms. */
function argumentsOf(properties: { [key: string]: Json }, caller: Scope): Map<string, string> {
  const args = new Map<string, string>();
  const given = properties.parameters;
  if (!isRecord(given)) return args;
  for (const [name, arg] of Object.entries(given)) {
    const value = isRecord(arg) ? arg.value : undefined;
    if (typeof value !== 'string') continue;
    const inner = expressionText(value);
    args.set(name, inner === undefined ? quoted(value) : inline(inner, caller));
  }
  return args;
}

/** `format('Microsoft.Storage/storageAccounts/{0}/blobServices/{1}', …)` or `resourceId('<type>', …)` → the type it names. */
function typeNamedBy(scope: string, symbols: ReadonlyMap<string, string>): string | undefined {
  const symbolic = symbols.get(scope);
  if (symbolic !== undefined) return symbolic;
  const quoted = /'(Microsoft\.[^']+)'/.exec(scope)?.[1];
  if (quoted === undefined) return undefined;
  // resourceId('<type>', names…) states the type whole.
  if (/^resourceId\(/.test(scope)) return quoted;
  // Namespace, then type and name segments alternate: keep the types.
  return quoted
    .split('/')
    .filter((_segment, i) => i === 0 || i % 2 === 1)
    .join('/');
}

function walk(
  template: ArmTemplate,
  path: string,
  deployment: { readonly conditional: boolean; readonly loop: boolean },
  out: { resources: ResourceView[]; outputs: OutputView[]; params: ParamView[] },
  args: ReadonlyMap<string, string> = new Map(),
): void {
  const scope: Scope = { variables: template.variables ?? {}, args };
  const entries: [string, Json][] = Array.isArray(template.resources)
    ? template.resources.map((r, i) => [String(i), r])
    : Object.entries(template.resources ?? {});
  const symbols = new Map<string, string>();
  for (const [symbol, r] of entries) if (isRecord(r) && typeof r.type === 'string') symbols.set(symbol, r.type);
  for (const [name, p] of Object.entries(template.parameters ?? {})) {
    out.params.push({ path, name, defaultValue: p.defaultValue === undefined ? undefined : toValue(p.defaultValue, scope) });
  }
  for (const [name, o] of Object.entries(template.outputs ?? {})) out.outputs.push({ path, name, value: toValue(o.value ?? null, scope) });
  for (const [symbol, r] of entries) {
    if (!isRecord(r) || typeof r.type !== 'string') continue;
    const isConditional = deployment.conditional || r.condition !== undefined;
    // A module called in a loop deploys its resources once per item: they count as looped too.
    const isLoop = deployment.loop || r.copy !== undefined;
    const properties = r.properties;
    if (r.type.toLowerCase() === 'microsoft.resources/deployments' && isRecord(properties) && isRecord(properties.template)) {
      // Bicep names module deployments with an expression (no-module-name); the symbol reads better.
      const name = typeof r.name === 'string' && !r.name.startsWith('[') ? r.name : symbol;
      walk(properties.template, `${path}/${name}`, { conditional: isConditional, loop: isLoop }, out, argumentsOf(properties, scope));
      continue;
    }
    const body = toValue(r, scope) as { [key: string]: Value };
    out.resources.push({
      path,
      symbol,
      type: r.type,
      apiVersion: typeof r.apiVersion === 'string' ? r.apiVersion : '',
      existing: r.existing === true,
      conditional: isConditional,
      loop: isLoop,
      scopeType: typeof r.scope === 'string' ? typeNamedBy(r.scope.replace(/^\[|\]$/g, ''), symbols) : undefined,
      body,
    });
  }
}

export function armModel(compiled: string): TemplateModel {
  const out = { resources: [] as ResourceView[], outputs: [] as OutputView[], params: [] as ParamView[] };
  walk(JSON.parse(compiled) as ArmTemplate, 'main', { conditional: false, loop: false }, out);
  return { source: 'arm', ...out, texts: [{ file: 'main.json', text: compiled }] };
}
