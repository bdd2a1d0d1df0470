/**
 * The long-running-operation convention (shared/http/operation.ts, docs/http-api.md): every 202 the
 * API documents carries Location and Retry-After and a body with `statusUri`, and nothing can answer
 * or document a 202 any other way.
 */
import * as z from 'zod';

import { capabilityTags, documentedRoutes } from '../../../shared/app/routes';
import { acceptedResponse, acceptedResult, acceptedSchema } from '../../../shared/http/operation';
import { json } from '../../../shared/http/responses';
import { defineRoute } from '../../../shared/http/route';
import { buildOpenApiDocument } from '../../../shared/openapi/document';

const document = buildOpenApiDocument(documentedRoutes(), {
  title: 'Tallyho',
  version: '1.0.0',
  description: 'test',
  serverUrl: '/api',
  tags: capabilityTags,
});

interface ResponseJson {
  readonly headers?: Record<string, unknown>;
  readonly content?: Record<string, { schema?: { $ref?: string } }>;
}

const accepted = Object.entries(document.paths).flatMap(([path, methods]) =>
  Object.entries(methods as Record<string, { operationId: string; responses: Record<string, ResponseJson> }>).flatMap(([, op]) =>
    op.responses['202'] === undefined ? [] : [{ path, id: op.operationId, response: op.responses['202'] }],
  ),
);

describe('202 Accepted', () => {
  test('the routes that answer 202 are the ones docs/http-api.md lists', () => {
    expect(accepted.map((a) => a.id).sort()).toEqual([
      'countersIncrement',
      'gatesStartRun',
      'jobsCancel',
      'jobsRetryFailed',
      'jobsSubmit',
      'schedulesTrigger',
      'streamsAppend',
      'streamsFlush',
      'streamsRemap',
    ]);
  });

  test.each(accepted)('$id documents Location, Retry-After and a body with statusUri', ({ response }) => {
    expect(Object.keys(response.headers ?? {}).sort()).toEqual(['Location', 'Retry-After']);
    const ref = response.content?.['application/json']?.schema?.$ref ?? '';
    const component = document.components.schemas[ref.replace('#/components/schemas/', '')] as { required?: string[] } | undefined;
    expect(component?.required).toContain('statusUri');
  });

  test('gate create, release and reset document no 202: their change is written before they answer', () => {
    for (const [path, method] of [
      ['/gates/{name}', 'put'],
      ['/gates/{name}/release', 'post'],
      ['/gates/{name}/reset', 'post'],
    ] as const) {
      const op = (document.paths[path] as Record<string, { responses: Record<string, unknown> }>)[method];
      expect(Object.keys(op?.responses ?? {})).not.toContain('202');
    }
    expect(Object.keys(document.components.schemas)).not.toContain('GateAccepted');
  });

  test('a 202 answer carries the status route as Location and in the body, and Retry-After in whole seconds', () => {
    const result = acceptedResult({ id: 'j1' }, '/api/jobs/j1', 1.2, { 'idempotent-replayed': 'true' });
    expect(result.status).toBe(202);
    expect(result.jsonBody).toEqual({ id: 'j1', statusUri: '/api/jobs/j1' });
    expect(result.headers).toMatchObject({ location: '/api/jobs/j1', 'retry-after': '2', 'idempotent-replayed': 'true' });
    expect(acceptedResult({}, '/api/x', 0).headers?.['retry-after']).toBe('1');
  });

  test('json() refuses a 202, so no route can answer one without the status route', () => {
    expect(() => json(202, {})).toThrow(/acceptedResult/);
  });

  test('defineRoute refuses a documented 202 not made by acceptedResponse', () => {
    const body = z.object({ id: z.string() });
    const spec = {
      name: 'jobsSubmit' as const,
      method: 'POST' as const,
      path: 'x',
      summary: 'x',
      tags: ['x'],
      handle: () => Promise.resolve(json(200, {})),
    };
    expect(() => defineRoute({ ...spec, responses: { 202: { description: 'accepted', schema: body } } })).toThrow(/acceptedResponse/);
    expect(() =>
      defineRoute({ ...spec, responses: { 202: acceptedResponse('accepted', acceptedSchema(body, 'TestAccepted')) } }),
    ).not.toThrow();
  });
});
