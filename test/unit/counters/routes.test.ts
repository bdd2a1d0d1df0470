import * as z from 'zod';

import { countersRoutes } from '../../../shared/counters/routes';

describe('counter route definitions', () => {
  const routes = countersRoutes({
    service: () => {
      throw new Error('no service needed to describe routes');
    },
  });

  it('defines configure (admin), increment, read, list and the figures (admin), each with problem responses', () => {
    expect(routes.map((r) => [r.name, r.method, r.path, r.auth])).toEqual([
      ['countersConfigure', 'PUT', 'counters/{name}', 'admin'],
      ['countersIncrement', 'POST', 'counters/{name}/increment', 'function'],
      ['countersGet', 'GET', 'counters/{name}', 'function'],
      ['countersList', 'GET', 'counters', 'admin'],
      ['countersFigures', 'GET', 'figures/counters', 'admin'],
    ]);
    const [figures, ...withInput] = [...routes].reverse();
    for (const route of withInput) expect(Object.keys(route.responses)).toEqual(expect.arrayContaining(['400', '500', '503']));
    // The figures take no input (nothing to answer 400 to) and skip unreadable rows: 200, or 503 when storage does not answer.
    expect(Object.keys(figures!.responses).sort()).toEqual(['200', '503']);
    expect(Object.keys(routes[1]!.responses)).toEqual(expect.arrayContaining(['202', '404', '409', '413']));
    expect(Object.keys(routes[2]!.responses)).toEqual(expect.arrayContaining(['200', '404']));
  });

  it('has examples that validate and schemas that render as JSON Schema for the OpenAPI document', () => {
    for (const route of routes) {
      for (const example of route.examples ?? []) expect(route.schemas.body?.safeParse(example).success).toBe(true);
      for (const schema of Object.values(route.schemas)) expect(() => z.toJSONSchema(schema, { io: 'input' })).not.toThrow();
      for (const response of Object.values(route.responses))
        if (response.schema) expect(() => z.toJSONSchema(response.schema!)).not.toThrow();
    }
  });
});
