/**
 * Item-schema patterns run on a linear-time engine (RE2, shared/jobs/processors/itemSchema.ts): a
 * pattern that backtracks exponentially on JavaScript's engine answers as fast as any other, and one
 * RE2 cannot run (a back-reference, a look-ahead) is refused when the schema is declared.
 */
import { ItemSchemas } from '../../../shared/jobs/processors/itemSchema';

const schemas = new ItemSchemas();

test('a pattern that backtracks catastrophically on a backtracking engine is matched in linear time', () => {
  const schema = { type: 'object', properties: { code: { type: 'string', pattern: '^(a+)+$' } } };
  expect(schemas.problem(schema)).toBeUndefined();
  // 5,000 `a`s and a `!`: on a backtracking engine, 2^5000 steps; each added character doubled 0.6 s at 30 (issue 36).
  const hostile = [{ id: 'x', code: `${'a'.repeat(5000)}!` } as { id: string }];
  const issues = schemas.issues(schema, hostile);
  expect(issues).toHaveLength(1);
  expect(issues[0]?.path).toContain('code');
  expect(schemas.issues(schema, [{ id: 'y', code: 'aaaa' } as { id: string }])).toEqual([]);
});

test('patterns keep JSON Schema meaning: unanchored unless anchored, in properties and patternProperties', () => {
  const schema = {
    type: 'object',
    properties: { sku: { type: 'string', pattern: '[0-9]{3}' } },
    patternProperties: { '^x-': { type: 'number' } },
  };
  expect(schemas.issues(schema, [{ id: 'a', sku: 'ab123cd', 'x-n': 1 } as { id: string }])).toEqual([]);
  expect(schemas.issues(schema, [{ id: 'b', sku: 'ab12cd' } as { id: string }])).toHaveLength(1);
  expect(schemas.issues(schema, [{ id: 'c', sku: '123', 'x-n': 'one' } as { id: string }])).toHaveLength(1);
});

test('a pattern the linear-time engine cannot run is refused when the schema is declared, and says why', () => {
  expect(schemas.problem({ type: 'string', pattern: '^(a)\\1$' })).toMatch(/cannot run in linear time/);
  expect(schemas.problem({ type: 'string', pattern: '^(?=a)a$' })).toMatch(/cannot run in linear time/);
});
