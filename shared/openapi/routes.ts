/** `GET /api/openapi.json`: the OpenAPI 3.1 document, generated once per process from the route catalog. */
import { createHash } from 'node:crypto';

import * as z from 'zod';

import { ifNoneMatchHits } from '../http/conditional';
import { defineRoute, type RouteDefinition } from '../http/route';
import { buildOpenApiDocument, type TagDoc } from './document';

export interface OpenApiRouteDeps {
  /** Every route of the app (the catalog); called on the first request. */
  readonly routes: () => readonly RouteDefinition[];
  readonly tags: readonly TagDoc[];
}

/** The contract's version: bump the major on a breaking change to any route. */
const apiVersion = '1.0.0';

const description =
  'Coordination primitives for client apps on Azure Functions. Errors are `application/problem+json` (RFC 9457) with a ' +
  'stable `code`; 503 and 429 answers carry `Retry-After`. Client operations take a function key, admin operations the ' +
  'admin key, both as `x-functions-key` (or `code` in the query).';

const openApiDocumentSchema = z
  .looseObject({
    openapi: z.string(),
    info: z.looseObject({ title: z.string(), version: z.string() }),
    paths: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'OpenApiDocument', description: 'An OpenAPI 3.1 document' });

interface Rendered {
  readonly text: string;
  readonly etag: string;
}

/** Renderings kept (one per route-prefix spelling; the host matches routes case-insensitively). */
const maxRenderings = 4;

export function openApiRoutes(deps: OpenApiRouteDeps): RouteDefinition[] {
  const rendered = new Map<string, Rendered>();
  const render = (serverUrl: string): Rendered => {
    let hit = rendered.get(serverUrl);
    if (hit === undefined) {
      const document = buildOpenApiDocument(deps.routes(), {
        title: 'Tallyho',
        version: apiVersion,
        description,
        serverUrl,
        tags: deps.tags,
      });
      const text = JSON.stringify(document);
      hit = { text, etag: `"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"` };
      if (rendered.size >= maxRenderings) rendered.delete(rendered.keys().next().value as string);
      rendered.set(serverUrl, hit);
    }
    return hit;
  };
  return [
    defineRoute({
      name: 'openApiDocument',
      method: 'GET',
      path: 'openapi.json',
      summary: 'This API as an OpenAPI 3.1 document',
      description:
        'Generated from the same route definitions and schemas that validate every request. Answers 304 to a current If-None-Match.',
      tags: ['operations'],
      requestHeaders: [{ name: 'If-None-Match', description: 'The ETag of the document you have; 304 while it is current.' }],
      responses: {
        200: { description: 'The document', schema: openApiDocumentSchema },
        304: { description: 'Unchanged since the ETag in If-None-Match' },
      },
      handle: ({ url, headers }) => {
        const serverUrl = url.pathname.replace(/\/openapi\.json$/, '');
        const { text, etag } = render(serverUrl);
        const cache = { etag, 'cache-control': 'no-cache' };
        if (ifNoneMatchHits(headers.get('if-none-match'), etag)) return Promise.resolve({ status: 304, headers: cache });
        return Promise.resolve({ status: 200, headers: { 'content-type': 'application/json; charset=utf-8', ...cache }, body: text });
      },
    }),
  ];
}
