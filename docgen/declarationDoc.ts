/**
 * What `npm run settings:sync` writes into docs/jobs.md from the declaration schema
 * (shared/jobs/processors/processorDefinition.ts, through zod's JSON Schema): one row per field of
 * `PUT /api/processors/{name}`, with the processor types it applies to, its limits and its default.
 * A test compares the committed page with this.
 */
import * as z from 'zod';

import { declareBody } from '../shared/jobs/processors/processorDefinition';
import { markdownTable } from './markdownTable';

interface FieldSchema {
  readonly type?: string;
  readonly const?: unknown;
  readonly description?: string;
  readonly default?: unknown;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly maxLength?: number;
  readonly anyOf?: readonly FieldSchema[];
  readonly $ref?: string;
  readonly properties?: Readonly<Record<string, FieldSchema>>;
  readonly required?: readonly string[];
}

interface Row {
  readonly field: string;
  readonly types: string[];
  readonly schema: FieldSchema;
  readonly required: boolean;
}

function values(s: FieldSchema): string {
  if (s.anyOf !== undefined) return s.anyOf.map(values).join(' or ');
  if (s.const !== undefined) return `\`${JSON.stringify(s.const)}\``;
  const range = s.minimum !== undefined && s.maximum !== undefined ? ` ${s.minimum}–${s.maximum.toLocaleString('en-US')}` : '';
  if (s.maxLength !== undefined) return `${s.type ?? ''} (≤ ${s.maxLength.toLocaleString('en-US')} characters)`;
  return `${s.type ?? 'any'}${range}`;
}

function rowsOf(): Row[] {
  const json = z.toJSONSchema(declareBody, { io: 'input', unrepresentable: 'any' }) as {
    $defs: Record<string, FieldSchema & { oneOf?: FieldSchema[] }>;
  };
  const defs = json.$defs;
  const variants = defs.ProcessorDeclaration?.oneOf ?? [];
  const rows = new Map<string, Row>();
  const add = (field: string, type: string, schema: FieldSchema, required: boolean): void => {
    const row = rows.get(field);
    if (row === undefined) rows.set(field, { field, types: [type], schema, required });
    else if (field === 'type') {
      // The discriminator: one row naming every type and what each means.
      const both = [row.schema, schema];
      rows.set(field, {
        ...row,
        types: [...row.types, type],
        schema: { anyOf: both, description: both.map((b) => `${JSON.stringify(b.const)}: ${b.description ?? ''}`).join('; ') },
      });
    } else row.types.push(type);
  };
  for (const variant of variants) {
    const type = String(variant.properties?.type?.const);
    for (const [field, schema] of Object.entries(variant.properties ?? {})) {
      const ref = schema.$ref === undefined ? undefined : defs[schema.$ref.replace('#/$defs/', '')];
      if (ref?.properties === undefined)
        add(field, type, schema, variant.required?.includes(field) === true && schema.default === undefined);
      else for (const [inner, innerSchema] of Object.entries(ref.properties)) add(`${field}.${inner}`, type, innerSchema, false);
    }
  }
  return [...rows.values()];
}

function declarationTable(): string {
  return markdownTable(
    ['field', 'processors', 'values', 'default', 'meaning'],
    rowsOf().map((r) => [
      `\`${r.field}\``,
      r.types.length > 1 ? 'both' : (r.types[0] ?? ''),
      values(r.schema).replaceAll('|', '\\|'),
      r.required ? 'required' : r.schema.default === undefined ? '—' : `\`${JSON.stringify(r.schema.default)}\``,
      (r.schema.description ?? '').replaceAll('|', '\\|'),
    ]),
  );
}

const marker = { begin: '<!-- declaration:begin (npm run settings:sync) -->', end: '<!-- declaration:end -->' };

/** docs/jobs.md with its generated table of declaration fields replaced. */
export function withDeclarationTable(page: string): string {
  const begin = page.indexOf(marker.begin);
  const end = page.indexOf(marker.end);
  if (begin < 0 || end < begin) throw new Error(`docs/jobs.md has no ${marker.begin} … ${marker.end} markers`);
  return `${page.slice(0, begin + marker.begin.length)}\n\n${declarationTable()}\n\n${page.slice(end)}`;
}
