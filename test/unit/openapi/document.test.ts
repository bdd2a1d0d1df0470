/**
 * The OpenAPI document, generated from the route catalog: one operation per route with its path
 * template, examples that validate against both the zod schemas the handlers use and the JSON Schemas
 * the document publishes. (Its validity as OpenAPI 3.1 is checked by the validator's CLI, in the tools
 * project: test/tools/openapiValidator.test.ts.)
 */
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

import { capabilityTags, documentedRoutes } from '../../../shared/app/routes';
import { buildOpenApiDocument, type OpenApiDocument } from '../../../shared/openapi/document';
import { openApiPath } from '../../../shared/http/routeTemplate';

const catalog = documentedRoutes();
/** The routes that are operations: the catch-all (shared/http/notFound.ts) is none, and the document leaves it out. */
const routes = catalog.filter((r) => r.anyMethod !== true);
const document = buildOpenApiDocument(catalog, {
  title: 'Tallyho',
  version: '1.0.0',
  description: 'test',
  serverUrl: '/api',
  tags: capabilityTags,
});
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- walking a JSON document
type Json = Record<string, any>;

function operationOf(doc: OpenApiDocument, method: string, path: string): Json | undefined {
  return doc.paths[path]?.[method.toLowerCase()];
}

/** An ajv that knows the document's components, so `$ref`s to them resolve. */
function schemaValidator(doc: OpenApiDocument) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const base = 'https://tallyho.invalid/openapi.json';
  const absolute = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(absolute);
    if (typeof value !== 'object' || value === null) return value;
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        k === '$ref' && typeof v === 'string' ? v.replace('#/components/schemas/', `${base}#/$defs/`) : absolute(v),
      ]),
    );
  };
  ajv.addSchema({ $id: base, $defs: absolute(doc.components.schemas) as Json });
  return (schema: Json) => ajv.compile(absolute(schema) as Json);
}

describe('OpenAPI document', () => {
  test('has one operation per route, at its path template without constraints, and nothing else', () => {
    const documented = Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`));
    const defined = routes.map((r) => `${r.method} ${openApiPath(r.path)}`);
    expect(documented.sort()).toEqual([...defined].sort());
    for (const route of routes) expect(operationOf(document, route.method, openApiPath(route.path))?.operationId).toBe(route.name);
    expect(catalog.filter((r) => r.anyMethod === true).map((r) => r.name)).toEqual(['zzNotFound']);
    expect(openApiPath('items/{id:int}/{rest?}/{*path}/{x:regex(^a{{1}}$)}/{n=5}')).toBe('/items/{id}/{rest}/{path}/{x}/{n}');
    expect(openApiPath('/a/{b:int:min(1)}')).toBe('/a/{b}');
    expect(() => openApiPath('a/{b')).toThrow(/Unclosed/);
  });

  test('declares every path parameter, and key security exactly for the routes that need a key', () => {
    for (const route of routes) {
      const op = operationOf(document, route.method, openApiPath(route.path)) as Json;
      const pathParams = (op.parameters ?? []).filter((p: Json) => p.in === 'path').map((p: Json) => p.name);
      expect(pathParams.sort()).toEqual([...openApiPath(route.path).matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort());
      const schemes = (op.security as Json[]).flatMap((s) => Object.keys(s)).sort();
      if (route.auth === 'anonymous') expect(schemes).toEqual([]);
      if (route.auth === 'admin') expect(schemes).toEqual(['adminKey', 'adminKeyQuery']);
      if (route.auth === 'function') expect(schemes).toEqual(['adminKey', 'adminKeyQuery', 'functionKey', 'functionKeyQuery']);
      if (route.auth !== 'anonymous') expect(op.responses['401']).toBeDefined();
    }
    expect(document.components.securitySchemes.functionKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'x-functions-key' });
    expect(document.components.securitySchemes.functionKeyQuery).toMatchObject({ type: 'apiKey', in: 'query', name: 'code' });
  });

  test('documents errors as problem+json with the shared Problem schema', () => {
    let errorResponses = 0;
    for (const item of Object.values(document.paths)) {
      for (const op of Object.values(item) as Json[]) {
        for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
          if (Number(status) < 400 || response.content === undefined) continue;
          errorResponses += 1;
          const media = response.content['application/problem+json'];
          expect({ status, op: op.operationId, media: media !== undefined }).toEqual({ status, op: op.operationId, media: true });
          const schema = media.schema as Json;
          const ref = typeof schema.$ref === 'string' ? schema.$ref.replace('#/components/schemas/', '') : undefined;
          const resolved = ref === undefined ? schema : document.components.schemas[ref];
          expect({ op: op.operationId, status, required: resolved?.required }).toEqual({
            op: op.operationId,
            status,
            required: expect.arrayContaining(['type', 'title', 'status', 'detail', 'code']),
          });
        }
      }
    }
    expect(errorResponses).toBeGreaterThan(routes.length);
    expect(document.components.schemas.Problem).toMatchObject({
      type: 'object',
      required: expect.arrayContaining(['type', 'title', 'status', 'detail', 'code']),
    });
  });

  test('every request body has examples, and they validate against the zod schema and the published JSON Schema', () => {
    const compile = schemaValidator(document);
    let checked = 0;
    for (const route of routes) {
      const op = operationOf(document, route.method, openApiPath(route.path)) as Json;
      const examples = route.examples ?? [];
      if (route.schemas.body === undefined) {
        expect({ route: route.name, examples }).toEqual({ route: route.name, examples: [] });
        continue;
      }
      expect({ route: route.name, hasExamples: examples.length > 0 }).toEqual({ route: route.name, hasExamples: true });
      const media = op.requestBody.content['application/json'] as Json;
      const validate = compile(media.schema);
      for (const example of examples) {
        const parsed = route.schemas.body.safeParse(example);
        expect({ route: route.name, example, zod: parsed.success ? 'ok' : parsed.error.message }).toEqual({
          route: route.name,
          example,
          zod: 'ok',
        });
        const valid = validate(example);
        expect({ route: route.name, example, jsonSchema: valid ? 'ok' : validate.errors }).toEqual({
          route: route.name,
          example,
          jsonSchema: 'ok',
        });
        checked += 1;
      }
      expect(Object.values(media.examples ?? {}).map((e) => (e as Json).value)).toEqual(examples);
    }
    expect(checked).toBeGreaterThan(10);
  });

  test('the published JSON Schemas reject what the zod schemas reject', () => {
    const compile = schemaValidator(document);
    const seqNext = compile(operationOf(document, 'POST', '/sequences/{name}/next')?.requestBody.content['application/json'].schema);
    expect(seqNext({ count: 0 })).toBe(false);
    expect(seqNext({ count: 1001 })).toBe(false);
    expect(seqNext({ count: 5, extra: true })).toBe(false);
    expect(seqNext({ count: 5 })).toBe(true);
  });

  test('moves schemas with an id to components and refers to them', () => {
    expect(Object.keys(document.components.schemas)).toEqual(expect.arrayContaining(['Problem', 'Sequence', 'Counter', 'Gate']));
    const seqGet = operationOf(document, 'GET', '/sequences/{name}') as Json;
    expect(seqGet.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Sequence' });
    expect(JSON.stringify(document)).not.toMatch(/#\/\$defs\/|x-pending/);
  });

  test('lists each tag once, with a description', () => {
    const names = (document.tags as Json[]).map((t) => t.name);
    expect(new Set(names).size).toBe(names.length);
    for (const tag of new Set(routes.flatMap((r) => r.tags))) expect(names).toContain(tag);
  });
});
