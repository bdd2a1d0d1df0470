/**
 * Turns zod schemas into JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1) for one OpenAPI
 * document, with every schema that carries `.meta({ id })` moved to `components.schemas` and
 * referenced by `$ref`.
 *
 * A schema can look different as a request (`io: 'input'`: defaults optional, coerced values as sent)
 * and as a response (`io: 'output'`). Both forms are collected; when they differ the response form
 * keeps the id and the request form is named `<id>Input`. The names are only known once every
 * schema is in, so references point at placeholders until `resolve` rewrites them.
 */
import { createHash } from 'node:crypto';

import * as z from 'zod';

import { acceptedInputOf } from './acceptedInput';

export type JsonSchema = { [key: string]: unknown };
export type SchemaIo = 'input' | 'output';

const placeholderPrefix = '#/x-pending/';
const componentPrefix = '#/components/schemas/';

function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableStringify(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Copies `value`, replacing every `$ref` string with what `rename` returns for it. */
function mapRefs<T>(value: T, rename: (ref: string) => string): T {
  if (Array.isArray(value)) return value.map((item: unknown) => mapRefs(item, rename)) as T;
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      out[key] = key === '$ref' && typeof item === 'string' ? rename(item) : mapRefs(item, rename);
    }
    return out as T;
  }
  return value;
}

/** zod names the recursive schemas that have no id `__schema0`, `__schema1`… per conversion. */
const anonymousId = /^__schema\d+$/;

/**
 * A stable name for a recursive schema without an id: zod's `z.json()` becomes `JsonValue`, anything
 * else a name derived from its content, so the same schema gets the same name in every conversion.
 */
function nameOfAnonymous(def: JsonSchema): string {
  const shape = stableStringify(def).replace(/__schema\d+/g, 'self');
  if (shape === jsonValueShape) return 'JsonValue';
  return `Recursive${createHash('sha256').update(shape).digest('hex').slice(0, 10)}`;
}

const jsonValueShape = stableStringify({
  anyOf: [
    { type: 'string' },
    { type: 'number' },
    { type: 'boolean' },
    { type: 'null' },
    { type: 'array', items: { $ref: '#/$defs/self' } },
    { type: 'object', propertyNames: { type: 'string' }, additionalProperties: { $ref: '#/$defs/self' } },
  ],
});

interface Forms {
  input?: JsonSchema;
  output?: JsonSchema;
}

export class SchemaComponents {
  private readonly forms = new Map<string, Forms>();

  /** The JSON Schema of `schema` as a request (`input`) or response (`output`) part. */
  schema(schema: z.ZodType, io: SchemaIo): JsonSchema {
    const documented = io === 'input' ? acceptedInputOf(schema) : schema;
    const converted = z.toJSONSchema(documented, { target: 'draft-2020-12', io, unrepresentable: 'any', cycles: 'ref', reused: 'inline' });
    const { $schema: _dialect, $defs = {}, ...root } = converted as JsonSchema & { $defs?: Record<string, JsonSchema> };
    const ids = new Map(Object.entries($defs).map(([id, def]) => [id, anonymousId.test(id) ? nameOfAnonymous(def) : id]));
    const toPlaceholder = (ref: string): string => {
      if (!ref.startsWith('#/$defs/')) return ref;
      const id = ref.slice('#/$defs/'.length);
      return `${placeholderPrefix}${io}/${ids.get(id) ?? id}`;
    };
    for (const [id, def] of Object.entries($defs)) this.add(ids.get(id) ?? id, io, mapRefs(def, toPlaceholder));
    return mapRefs(root, toPlaceholder);
  }

  /**
   * The schema a root `$ref` (from `schema`) points at, for parts that OpenAPI spells out field by
   * field (path, query and header parameters).
   */
  dereference(json: JsonSchema): JsonSchema {
    const ref = json.$ref;
    if (typeof ref !== 'string' || !ref.startsWith(placeholderPrefix)) return json;
    const [io, id] = ref.slice(placeholderPrefix.length).split('/') as [SchemaIo, string];
    const target = this.forms.get(id)?.[io];
    if (target === undefined) throw new Error(`Unknown schema reference ${ref}`);
    return this.dereference(target);
  }

  private add(id: string, io: SchemaIo, json: JsonSchema): void {
    const forms = this.forms.get(id) ?? {};
    const existing = forms[io];
    if (existing !== undefined && stableStringify(existing) !== stableStringify(json)) {
      throw new Error(`Two different schemas share the id "${id}" (${io}); give one of them another id`);
    }
    forms[io] = json;
    this.forms.set(id, forms);
  }

  /** Decides the component names; returns them and rewrites the placeholders in `document`. */
  resolve<T>(document: T): { document: T; schemas: Record<string, JsonSchema> } {
    const names = new Map<string, string>();
    const schemas: Record<string, JsonSchema> = {};
    const claim = (name: string, key: string, json: JsonSchema): void => {
      if (schemas[name] !== undefined) throw new Error(`The component name "${name}" is taken twice; rename a schema id`);
      schemas[name] = json;
      names.set(key, name);
    };
    for (const id of [...this.forms.keys()].sort()) {
      const { input, output } = this.forms.get(id) as Forms;
      if (input !== undefined && output !== undefined && stableStringify(input) !== stableStringify(output)) {
        claim(id, `output/${id}`, output);
        claim(`${id}Input`, `input/${id}`, input);
        continue;
      }
      const json = (output ?? input) as JsonSchema;
      claim(id, `output/${id}`, json);
      names.set(`input/${id}`, id);
    }
    const rename = (ref: string): string => {
      if (!ref.startsWith(placeholderPrefix)) return ref;
      const name = names.get(ref.slice(placeholderPrefix.length));
      if (name === undefined) throw new Error(`Unresolved schema reference ${ref}`);
      return `${componentPrefix}${name}`;
    };
    const resolved: Record<string, JsonSchema> = {};
    for (const [name, json] of Object.entries(schemas)) resolved[name] = mapRefs(json, rename);
    return { document: mapRefs(document, rename), schemas: resolved };
  }
}
