/**
 * A TemplateModel read from the ARM JSON that `bicep build` emits: every resource of every nested
 * (module) deployment, in either language version (resources as an array, or keyed by symbolic
 * name). Expressions stay text; references to literal template variables are inlined, so a role
 * assignment reads `subscriptionResourceId('…/roleDefinitions', '<guid>')` as in the Bicep model.
 */
import { Expr, type OutputView, type ParamView, type ResourceView, type TemplateModel, type Value } from './templateModel';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

interface ArmTemplate {
  readonly parameters?: Record<string, { readonly defaultValue?: Json }>;
  readonly variables?: Record<string, Json>;
  readonly resources?: Json[] | Record<string, Json>;
  readonly outputs?: Record<string, { readonly value?: Json }>;
}

const isRecord = (v: Json | undefined): v is { [key: string]: Json } => typeof v === 'object' && v !== null && !Array.isArray(v);

function inlineVariables(text: string, variables: Record<string, Json>): string {
  return text.replace(/variables\('([^']+)'\)((?:\.\w+)*)/g, (whole, name: string, members: string) => {
    let value: Json | undefined = variables[name];
    for (const member of members.split('.').filter((m) => m !== '')) value = isRecord(value) ? value[member] : undefined;
    return typeof value === 'string' ? `'${value}'` : whole;
  });
}

function toValue(json: Json, variables: Record<string, Json>): Value {
  if (typeof json === 'string') {
    if (json.startsWith('[') && !json.startsWith('[[') && json.endsWith(']'))
      return new Expr(inlineVariables(json.slice(1, -1), variables));
    return json.startsWith('[[') ? json.slice(1) : json;
  }
  if (Array.isArray(json)) return json.map((item) => toValue(item, variables));
  if (isRecord(json)) return Object.fromEntries(Object.entries(json).map(([k, v]) => [k, toValue(v, variables)]));
  return json;
}

/** `format('Microsoft.Storage/storageAccounts/{0}/blobServices/{1}', …)` → the type it names. */
function typeNamedBy(scope: string, symbols: ReadonlyMap<string, string>): string | undefined {
  const symbolic = symbols.get(scope);
  if (symbolic !== undefined) return symbolic;
  const quoted = /'(Microsoft\.[^']+)'/.exec(scope)?.[1];
  if (quoted === undefined) return undefined;
  // Namespace, then type and name segments alternate: keep the types.
  return quoted
    .split('/')
    .filter((_segment, i) => i === 0 || i % 2 === 1)
    .join('/');
}

function walk(
  template: ArmTemplate,
  path: string,
  conditional: boolean,
  out: { resources: ResourceView[]; outputs: OutputView[]; params: ParamView[] },
): void {
  const variables = template.variables ?? {};
  const entries: [string, Json][] = Array.isArray(template.resources)
    ? template.resources.map((r, i) => [String(i), r])
    : Object.entries(template.resources ?? {});
  const symbols = new Map<string, string>();
  for (const [symbol, r] of entries) if (isRecord(r) && typeof r.type === 'string') symbols.set(symbol, r.type);
  for (const [name, p] of Object.entries(template.parameters ?? {})) {
    out.params.push({ path, name, defaultValue: p.defaultValue === undefined ? undefined : toValue(p.defaultValue, variables) });
  }
  for (const [name, o] of Object.entries(template.outputs ?? {}))
    out.outputs.push({ path, name, value: toValue(o.value ?? null, variables) });
  for (const [symbol, r] of entries) {
    if (!isRecord(r) || typeof r.type !== 'string') continue;
    const isConditional = conditional || r.condition !== undefined;
    const properties = r.properties;
    if (r.type.toLowerCase() === 'microsoft.resources/deployments' && isRecord(properties) && isRecord(properties.template)) {
      const name = typeof r.name === 'string' ? r.name : symbol;
      walk(properties.template, `${path}/${name}`, isConditional, out);
      continue;
    }
    const body = toValue(r, variables) as { [key: string]: Value };
    out.resources.push({
      path,
      symbol,
      type: r.type,
      apiVersion: typeof r.apiVersion === 'string' ? r.apiVersion : '',
      existing: r.existing === true,
      conditional: isConditional,
      loop: r.copy !== undefined,
      scopeType: typeof r.scope === 'string' ? typeNamedBy(r.scope.replace(/^\[|\]$/g, ''), symbols) : undefined,
      body,
    });
  }
}

export function armModel(compiled: string): TemplateModel {
  const out = { resources: [] as ResourceView[], outputs: [] as OutputView[], params: [] as ParamView[] };
  walk(JSON.parse(compiled) as ArmTemplate, 'main', false, out);
  return { source: 'arm', ...out, texts: [{ file: 'main.json', text: compiled }] };
}
