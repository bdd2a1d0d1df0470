/**
 * The JSON Schema a declared processor may give its items, checked at submit so a bad item is a 400
 * naming the item and the field, not a failure discovered by a worker later. Ajv compiles each
 * schema once per process (keyed by its text); a schema that does not compile is refused when it is
 * declared. Only the admin declares schemas; still, their size and nesting are bounded, and no
 * `$ref` may leave the schema (Ajv loads nothing remote unless told to, and is not told to).
 *
 * `pattern` and `patternProperties` run on RE2 (re2js, a pure-JavaScript port): matching is linear
 * in the input, so no pattern can make a submission backtrack for seconds (`^(a+)+$` on a backtracking
 * engine doubles its time with each character). What RE2 cannot promise to run in linear time —
 * back-references, look-around — does not compile, so such a schema is refused when it is declared.
 */
import { createHash } from 'node:crypto';

import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { RE2JS } from 're2js';

import { type FieldIssue } from '../../errors';

/** A schema is stored in one table property (32K characters); keep well inside it. */
const maxItemSchemaChars = 30_000;

/** Ajv's regular-expression engine: RE2, linear in the input; a pattern RE2 cannot run is a declaration error. */
const linearTimePatterns = Object.assign(
  (pattern: string): { test(s: string): boolean; toString(): string } => {
    let re: RE2JS;
    try {
      re = RE2JS.compile(pattern);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new Error(
        `The pattern ${JSON.stringify(pattern)} cannot run in linear time (RE2: ${why}); back-references and look-around are not supported`,
      );
    }
    return { test: (s) => re.test(s), toString: () => pattern };
  },
  { code: 're2js' },
);

export class ItemSchemas {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor() {
    // A typo in a keyword is an error at declaration, not a schema that silently allows everything;
    // `required` without `properties` and loose type combinations are ordinary JSON Schema and pass.
    this.ajv = new Ajv2020({
      allErrors: true,
      strictSchema: true,
      strictNumbers: true,
      strictTypes: false,
      strictTuples: false,
      strictRequired: false,
      validateFormats: true,
      code: { regExp: linearTimePatterns },
    });
    addFormats(this.ajv);
  }

  /** Why the schema cannot be used, or undefined when it compiles. */
  problem(schema: Record<string, unknown>): string | undefined {
    const text = JSON.stringify(schema);
    if (text.length > maxItemSchemaChars) return `The schema is ${text.length} characters; at most ${maxItemSchemaChars}`;
    try {
      this.validator(schema, text);
      return undefined;
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
  }

  /** The issues of `items` under `body.items.<i>`, at most `max`, each naming the item's id and the field. */
  issues(schema: Record<string, unknown>, items: readonly { readonly id: string }[], max = 20): FieldIssue[] {
    const validate = this.validator(schema, JSON.stringify(schema));
    const out: FieldIssue[] = [];
    for (let i = 0; i < items.length && out.length < max; i++) {
      const { id } = items[i] as { id: string };
      if (validate(items[i])) continue;
      for (const error of validate.errors ?? []) {
        if (out.length >= max) break;
        out.push(issueOf(i, id, error));
      }
    }
    return out;
  }

  private validator(schema: Record<string, unknown>, text: string): ValidateFunction {
    const key = createHash('sha256').update(text).digest('base64');
    let validate = this.compiled.get(key);
    if (validate === undefined) {
      validate = this.ajv.compile(schema);
      if (this.compiled.size > 500) this.compiled.clear();
      this.compiled.set(key, validate);
    }
    return validate;
  }
}

function issueOf(index: number, id: string, error: ErrorObject): FieldIssue {
  // `/size/width` -> `.size.width`; a missing property is named as the field it should be.
  const pointer = error.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  const missing = error.keyword === 'required' ? (error.params as { missingProperty?: string }).missingProperty : undefined;
  const field = [...pointer, ...(missing === undefined ? [] : [missing])];
  const path = ['body', 'items', String(index), ...field].join('.');
  // Ajv's own text names the parent and repeats the field ("must have required property 'url'" of the
  // item): the message names the item by id, the field by its path, then what is wrong with it.
  if (missing !== undefined) return { path, message: `item "${id}": field ${field.join('.')} is required by the processor's itemSchema` };
  const what = field.length === 0 ? 'the item' : `field ${field.join('.')}`;
  return { path, message: `item "${id}": ${what} ${error.message ?? 'is invalid'}` };
}
