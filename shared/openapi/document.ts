/**
 * The OpenAPI 3.1 document of the app, generated from the route definitions (the same zod schemas
 * that validate every request), never written by hand.
 *
 * Besides what each route declares, the document states what every route gets from the shared
 * request pipeline (shared/http/route.ts) and the Functions host: a 400 problem when its input has
 * schemas, a 413 when it takes a body, a 500 problem for unexpected failures, and a 401 from the
 * host when the route needs a key.
 */
import type { AuthLevel, RouteDefinition } from '../http/route';
import { problemSchema } from '../http/schemas';
import { type JsonSchema, SchemaComponents } from './components';
import { openApiPath, pathParameterNames } from '../http/routeTemplate';

export interface TagDoc {
  readonly name: string;
  readonly description: string;
}

export interface DocumentInfo {
  readonly title: string;
  readonly version: string;
  readonly description: string;
  /** Where the routes live, e.g. `/api` (the host's route prefix). */
  readonly serverUrl: string;
  readonly tags: readonly TagDoc[];
}

type Json = { [key: string]: unknown };

export interface OpenApiDocument extends Json {
  readonly openapi: '3.1.1';
  readonly paths: Record<string, Record<string, Json>>;
  readonly components: { readonly schemas: Record<string, JsonSchema>; readonly securitySchemes: Record<string, Json> };
}

const problemContentType = 'application/problem+json';

const securitySchemes = {
  functionKey: {
    type: 'apiKey',
    in: 'header',
    name: 'x-functions-key',
    description: 'A function key (or the admin key) of the Function App.',
  },
  functionKeyQuery: {
    type: 'apiKey',
    in: 'query',
    name: 'code',
    description: 'A function key (or the admin key) as the `code` query parameter, for clients that cannot set headers.',
  },
  adminKey: {
    type: 'apiKey',
    in: 'header',
    name: 'x-functions-key',
    description: 'The admin (master) key of the Function App. Admin operations accept no other key.',
  },
  adminKeyQuery: {
    type: 'apiKey',
    in: 'query',
    name: 'code',
    description: 'The admin (master) key as the `code` query parameter.',
  },
} as const;

function security(auth: AuthLevel): Json[] {
  switch (auth) {
    case 'anonymous':
      return [];
    case 'function':
      return [{ functionKey: [] }, { functionKeyQuery: [] }, { adminKey: [] }, { adminKeyQuery: [] }];
    case 'admin':
      return [{ adminKey: [] }, { adminKeyQuery: [] }];
  }
}

function objectFields(json: JsonSchema, where: string): { properties: Record<string, JsonSchema>; required: Set<string> } {
  if (json.type !== 'object' || typeof json.properties !== 'object' || json.properties === null) {
    throw new Error(`${where} must be a zod object schema to be documented as parameters`);
  }
  const required = Array.isArray(json.required) ? (json.required as string[]) : [];
  return { properties: json.properties as Record<string, JsonSchema>, required: new Set(required) };
}

/** Moves the keywords OpenAPI keeps on the Parameter Object out of the parameter's schema. */
function parameter(name: string, location: 'path' | 'query' | 'header', schema: JsonSchema, required: boolean): Json {
  const { description, ...rest } = schema;
  return {
    name,
    in: location,
    required,
    ...(typeof description === 'string' ? { description } : {}),
    schema: rest,
  };
}

function parameters(route: RouteDefinition, components: SchemaComponents): Json[] {
  const out: Json[] = [];
  const names = pathParameterNames(route.path);
  const params = route.schemas.params;
  const documented =
    params === undefined ? undefined : objectFields(components.dereference(components.schema(params, 'input')), `${route.name} params`);
  for (const name of names) {
    out.push(parameter(name, 'path', documented?.properties[name] ?? { type: 'string' }, true));
  }
  for (const name of Object.keys(documented?.properties ?? {})) {
    if (!names.includes(name)) throw new Error(`${route.name}: params schema has "${name}", which is not in the path ${route.path}`);
  }
  if (route.schemas.query !== undefined) {
    const query = objectFields(components.dereference(components.schema(route.schemas.query, 'input')), `${route.name} query`);
    for (const [name, schema] of Object.entries(query.properties)) out.push(parameter(name, 'query', schema, query.required.has(name)));
  }
  for (const header of route.requestHeaders ?? []) {
    out.push(parameter(header.name, 'header', { type: 'string', description: header.description }, header.required ?? false));
  }
  return out;
}

function requestBody(route: RouteDefinition, components: SchemaComponents): Json | undefined {
  const body = route.schemas.body;
  if (body === undefined) return undefined;
  const examples = Object.fromEntries((route.examples ?? []).map((value, i) => [`example${i + 1}`, { value }]));
  return {
    required: route.bodyRequired ?? false,
    content: {
      'application/json': {
        schema: components.schema(body, 'input'),
        ...(Object.keys(examples).length === 0 ? {} : { examples }),
      },
    },
  };
}

function responses(route: RouteDefinition, components: SchemaComponents): Json {
  const out: Record<string, Json> = {};
  for (const [status, doc] of Object.entries(route.responses)) {
    const contentType = doc.contentType ?? (Number(status) >= 400 ? problemContentType : 'application/json');
    const hasContent = doc.schema !== undefined || doc.contentType !== undefined;
    out[status] = {
      description: doc.description,
      ...(doc.headers === undefined
        ? {}
        : {
            headers: Object.fromEntries(
              doc.headers.map((h) => [h.name, { description: h.description, required: true, schema: { type: 'string' } }]),
            ),
          }),
      ...(hasContent
        ? { content: { [contentType]: doc.schema === undefined ? {} : { schema: components.schema(doc.schema, 'output') } } }
        : {}),
    };
  }
  const problem = (description: string): Json => ({
    description,
    content: { [problemContentType]: { schema: components.schema(problemSchema, 'output') } },
  });
  const { params, query, body } = route.schemas;
  if (out['400'] === undefined && (params !== undefined || query !== undefined || body !== undefined)) {
    out['400'] = problem('The request is not valid (see `issues`); nothing was changed');
  }
  if (out['413'] === undefined && body !== undefined) out['413'] = problem('The body is larger than this endpoint accepts');
  if (out['500'] === undefined) out['500'] = problem('An unexpected failure; the problem document discloses nothing internal');
  if (out['401'] === undefined && route.auth !== 'anonymous') {
    out['401'] = { description: `No valid ${route.auth === 'admin' ? 'admin' : 'function or admin'} key (answered by the Functions host)` };
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

function operation(route: RouteDefinition, components: SchemaComponents): Json {
  const params = parameters(route, components);
  const body = requestBody(route, components);
  return {
    operationId: route.name,
    summary: route.summary,
    ...(route.description === undefined ? {} : { description: route.description }),
    tags: [...route.tags],
    security: security(route.auth),
    ...(params.length === 0 ? {} : { parameters: params }),
    ...(body === undefined ? {} : { requestBody: body }),
    responses: responses(route, components),
  };
}

export function buildOpenApiDocument(routes: readonly RouteDefinition[], info: DocumentInfo): OpenApiDocument {
  const components = new SchemaComponents();
  const paths: Record<string, Record<string, Json>> = {};
  const operationIds = new Set<string>();
  for (const route of routes) {
    // The catch-all answers what no operation does; listing it would document every path as served.
    if (route.anyMethod === true) continue;
    if (operationIds.has(route.name)) throw new Error(`Two routes are named "${route.name}"`);
    operationIds.add(route.name);
    const path = openApiPath(route.path);
    const item = (paths[path] ??= {});
    const method = route.method.toLowerCase();
    if (item[method] !== undefined) throw new Error(`${route.method} ${path} is defined twice (${route.name})`);
    item[method] = operation(route, components);
  }
  const sortedPaths = Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b)));
  const resolved = components.resolve(sortedPaths);
  const usedTags = new Set(routes.flatMap((r) => r.tags));
  return {
    openapi: '3.1.1',
    info: { title: info.title, version: info.version, description: info.description },
    servers: [{ url: info.serverUrl }],
    tags: info.tags.filter((t) => usedTags.has(t.name)).map((t) => ({ name: t.name, description: t.description })),
    paths: resolved.document,
    components: { schemas: resolved.schemas, securitySchemes },
  };
}
