/**
 * What a deployment of infra/ would create, as `bicep snapshot` predicts it (see compile.ts): every
 * resource with its id, type, name and body, values known before the deployment evaluated, and values
 * that exist only at deploy time left as ARM expressions (`"[reference('<id>', '<version>').x]"`).
 * Nothing here evaluates a template: the CLI did.
 */
import { createHash } from 'node:crypto';

export type Json = null | boolean | number | string | readonly Json[] | { readonly [key: string]: Json };
export type JsonObject = { readonly [key: string]: Json };

export interface Resource {
  readonly id: string;
  /** Full resource type, e.g. `Microsoft.Storage/storageAccounts/tableServices/tables`. */
  readonly type: string;
  readonly name: string;
  readonly apiVersion: string;
  /** Id of the resource an extension resource (role assignment, diagnostic setting) applies to. */
  readonly scope: string | undefined;
  /** Type of that resource. */
  readonly scopeType: string | undefined;
  readonly body: JsonObject;
}

export interface Deployment {
  readonly scenario: string;
  readonly resources: readonly Resource[];
  /** main.bicep's outputs. */
  readonly outputs: JsonObject;
}

export function isPlainObject(value: Json | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The type of the resource a resource id names (`…/providers/<ns>/<type>/<name>/<type>/<name>`). */
export function typeOfId(id: string): string {
  const tail = id.split('/providers/').pop() ?? '';
  if (!id.includes('/providers/')) return /\/resourceGroups\/[^/]+$/i.test(id) ? 'Microsoft.Resources/resourceGroups' : '';
  // Namespace, then type and name segments alternate: keep the types.
  return tail
    .split('/')
    .filter((_segment, i) => i === 0 || i % 2 === 1)
    .join('/');
}

/** The id an extension resource's id is built on (the part before its own `/providers/`), if any. */
export function scopeOfId(id: string): string | undefined {
  const at = id.lastIndexOf('/providers/');
  const scope = at < 0 ? '' : id.slice(0, at);
  return scope.includes('/providers/') ? scope : undefined;
}

export function deploymentOf(scenario: string, snapshotText: string): Deployment {
  const snapshot = JSON.parse(snapshotText) as { predictedResources?: JsonObject[]; outputs?: JsonObject };
  const resources = (snapshot.predictedResources ?? []).map((body): Resource => {
    const id = typeof body.id === 'string' ? body.id : '';
    const scope = scopeOfId(id);
    return {
      id,
      type: typeof body.type === 'string' ? body.type : '',
      name: typeof body.name === 'string' ? body.name : '',
      apiVersion: typeof body.apiVersion === 'string' ? body.apiVersion : '',
      scope,
      scopeType: scope === undefined ? undefined : typeOfId(scope),
      body,
    };
  });
  return { scenario, resources, outputs: snapshot.outputs ?? {} };
}

/** `body` at a dotted path, with ARM's case-insensitive property names. */
export function at(body: Json | undefined, path: string): Json | undefined {
  let current: Json | undefined = body;
  for (const key of path.split('.')) {
    if (!isPlainObject(current)) return undefined;
    const match = Object.keys(current).find((k) => k.toLowerCase() === key.toLowerCase());
    current = match === undefined ? undefined : current[match];
  }
  return current;
}

/** Text of a value for pattern checks: strings (and deploy-time expressions) as themselves, the rest as JSON. */
export function textOf(value: Json | undefined): string {
  if (value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export function ofType(deployment: Deployment, type: string): Resource[] {
  return deployment.resources.filter((r) => r.type.toLowerCase() === type.toLowerCase());
}

/** The last segment of a resource name (child resources are named `parent/child` in ARM). */
export function leafName(resource: Resource): string {
  return resource.name.split('/').pop() ?? '';
}

/**
 * ARM's `guid(...)`: a name-based (version 5, SHA-1) UUID of the arguments joined with '-', in the
 * deployment engine's own namespace. The role-assignment tests compare it with the names the CLI
 * computed, which pins both.
 */
export function armGuid(...args: readonly string[]): string {
  const namespace = Buffer.from('11fb06fb712d4ddd98c7e71bbd588830', 'hex');
  const hash = createHash('sha1').update(namespace).update(args.join('-'), 'utf8').digest().subarray(0, 16);
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.toString('hex');
  return [hex.slice(0, 8), hex.slice(8, 12), hex.slice(12, 16), hex.slice(16, 20), hex.slice(20)].join('-');
}
