/**
 * `shared/resources.ts` flattened into what `infra/` provisions: sorted lists of tables, queues,
 * containers and Service Bus entities. `npm run infra:sync` writes it to `infra/app-resources.json`
 * (Bicep reads that file); a test fails when the file and this manifest differ, and names every
 * resource whose name Azure would reject.
 */
import { type AzureNameRule, azureNameRules } from './names';
import * as resources from './resources';

interface TopicManifest {
  readonly name: string;
  readonly subscriptions: readonly string[];
}

export interface ResourceManifest {
  readonly tables: readonly string[];
  readonly queues: readonly string[];
  readonly containers: readonly string[];
  readonly serviceBus: { readonly queues: readonly string[]; readonly topics: readonly TopicManifest[] };
}

/** Every string leaf of a constant (nested objects and arrays allowed), sorted and deduplicated. */
function leaves(value: unknown, where: string): string[] {
  const found = new Set<string>();
  const visit = (v: unknown, path: string): void => {
    if (typeof v === 'string') found.add(v);
    else if (Array.isArray(v)) v.forEach((item, i) => visit(item, `${path}[${i}]`));
    else if (typeof v === 'object' && v !== null) for (const [k, item] of Object.entries(v)) visit(item, `${path}.${k}`);
    else throw new Error(`${path} is a ${typeof v}; infra/ can only provision resources named by constant strings`);
  };
  visit(value, where);
  return [...found].sort();
}

/** A topic is its name, or `{ name, subscriptions }` with subscription names as string leaves. */
function topicOf(key: string, value: unknown): TopicManifest {
  if (typeof value === 'string') return { name: value, subscriptions: [] };
  if (typeof value === 'object' && value !== null && 'name' in value && typeof value.name === 'string') {
    const subscriptions = 'subscriptions' in value ? leaves(value.subscriptions, `topics.${key}.subscriptions`) : [];
    return { name: value.name, subscriptions };
  }
  throw new Error(`serviceBusEntities.topics.${key} must be a topic name or { name, subscriptions }`);
}

const knownExports = new Set(['tables', 'queues', 'containers', 'serviceBusEntities']);

export function resourceManifest(module: Readonly<Record<string, unknown>> = resources): ResourceManifest {
  const unknown = Object.keys(module).filter((name) => !knownExports.has(name));
  if (unknown.length > 0) {
    throw new Error(`shared/resources.ts exports ${unknown.join(', ')}, which infra/ does not know how to provision`);
  }
  const sb = (module.serviceBusEntities ?? {}) as { topics?: Record<string, unknown>; queues?: unknown };
  return {
    tables: leaves(module.tables ?? {}, 'tables'),
    queues: leaves(module.queues ?? {}, 'queues'),
    containers: leaves(module.containers ?? {}, 'containers'),
    serviceBus: {
      queues: leaves(sb.queues ?? {}, 'serviceBusEntities.queues'),
      topics: Object.entries(sb.topics ?? {})
        .map(([key, value]) => topicOf(key, value))
        .sort((a, b) => a.name.localeCompare(b.name)),
    },
  };
}

// Azure's naming rules (shared/names.ts), so a bad name fails in a test rather than halfway through a deployment.
const rules: readonly [AzureNameRule, (m: ResourceManifest) => readonly string[]][] = [
  [azureNameRules.table, (m) => m.tables],
  [azureNameRules.queue, (m) => m.queues],
  [azureNameRules.container, (m) => m.containers],
  [azureNameRules.serviceBusEntity, (m) => m.serviceBus.queues],
  [azureNameRules.serviceBusEntity, (m) => m.serviceBus.topics.map((t) => t.name)],
  [azureNameRules.serviceBusSubscription, (m) => m.serviceBus.topics.flatMap((t) => t.subscriptions)],
];

/** Names Azure would reject, one message each. */
export function invalidResourceNames(manifest: ResourceManifest): string[] {
  return rules.flatMap(([rule, pick]) =>
    pick(manifest)
      .filter((name) => !rule.pattern.test(name))
      .map((name) => `${rule.store} "${name}" does not match ${String(rule.pattern)}`),
  );
}
