/**
 * One shape for "what the templates deploy", built either from the compiled ARM JSON (when a Bicep
 * CLI is available) or from the Bicep sources themselves (always), so the policy tests run the same
 * assertions on both. Values the template computes at deploy time stay symbolic (`Expr`).
 */

/** A deploy-time expression, kept as text (Bicep syntax, or ARM's without the brackets). */
export class Expr {
  constructor(readonly text: string) {}
}

export type Value = null | boolean | number | string | Expr | readonly Value[] | { readonly [key: string]: Value };

export interface ResourceView {
  /** Where it was declared: the module path through the template, e.g. `main/storage`. */
  readonly path: string;
  readonly symbol: string;
  /** Full resource type, e.g. `Microsoft.Storage/storageAccounts/tableServices/tables`. */
  readonly type: string;
  readonly apiVersion: string;
  readonly existing: boolean;
  readonly conditional: boolean;
  /** Declared with a loop that could not be expanded (its items are known only at deploy time). */
  readonly loop: boolean;
  /** Type of the resource named by `scope`, for extension resources (role assignments, diagnostics). */
  readonly scopeType: string | undefined;
  readonly body: { readonly [key: string]: Value };
}

export interface OutputView {
  readonly path: string;
  readonly name: string;
  readonly value: Value;
}

export interface ParamView {
  readonly path: string;
  readonly name: string;
  readonly defaultValue: Value | undefined;
}

export interface TemplateModel {
  /** `bicep` (from the sources) or `arm` (from the compiled JSON). */
  readonly source: 'bicep' | 'arm';
  readonly resources: readonly ResourceView[];
  readonly outputs: readonly OutputView[];
  readonly params: readonly ParamView[];
  /** Every source text the model was built from, for "must never appear" checks. */
  readonly texts: readonly { readonly file: string; readonly text: string }[];
}

export function isPlainObject(value: Value | undefined): value is { readonly [key: string]: Value } {
  return typeof value === 'object' && value !== null && !(value instanceof Expr) && !Array.isArray(value);
}

/** `body` at a dotted path, with ARM's case-insensitive property names. */
export function at(body: Value | undefined, path: string): Value | undefined {
  let current: Value | undefined = body;
  for (const key of path.split('.')) {
    if (!isPlainObject(current)) return undefined;
    const match = Object.keys(current).find((k) => k.toLowerCase() === key.toLowerCase());
    current = match === undefined ? undefined : current[match];
  }
  return current;
}

/** Text of a value for pattern checks: literals as themselves, expressions as their source. */
export function textOf(value: Value | undefined): string {
  if (value === undefined) return '';
  if (value instanceof Expr) return value.text;
  if (typeof value === 'string') return value;
  return JSON.stringify(value, (_k, v: unknown) => (v instanceof Expr ? v.text : v));
}

export function ofType(model: TemplateModel, type: string, options: { existing?: boolean } = {}): ResourceView[] {
  return model.resources.filter(
    (r) => r.type.toLowerCase() === type.toLowerCase() && (options.existing === undefined || r.existing === options.existing),
  );
}

/** The last segment of a resource name (child resources are named `parent/child` in ARM). */
export function leafName(resource: ResourceView): Value | undefined {
  const name = at(resource.body, 'name');
  if (typeof name !== 'string') return name;
  return name.split('/').pop();
}
