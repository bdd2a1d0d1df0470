/** `GET /api/health`: 200 with the checks when healthy, 503 problem+json with the checks when not. */
import * as z from 'zod';

import { AppError } from '../errors';
import { defineRoute, type RouteDefinition } from '../http/route';
import { json, problemResult } from '../http/responses';
import { problemSchema } from '../http/schemas';
import { checkHealth, type CheckName, type HealthDeps } from './check';

const checkResult = z
  .object({
    status: z.enum(['pass', 'fail', 'skipped']),
    durationMs: z.number().optional(),
    code: z.string().optional(),
    httpStatus: z.number().int().optional(),
    settings: z.array(z.string()).optional(),
    detail: z.string().optional(),
  })
  .meta({ id: 'HealthCheck', description: 'One dependency check. Failures name a code and HTTP status, never a value or URL.' });

const checks = z
  .object({ config: checkResult, blob: checkResult, queue: checkResult, table: checkResult, serviceBus: checkResult })
  .meta({ id: 'HealthChecks' });

const healthReport = z.object({ status: z.literal('healthy'), checks }).meta({
  id: 'HealthReport',
  example: {
    status: 'healthy',
    checks: {
      config: { status: 'pass' },
      blob: { status: 'pass', durationMs: 12 },
      queue: { status: 'pass', durationMs: 9 },
      table: { status: 'pass', durationMs: 11 },
      serviceBus: { status: 'skipped', detail: 'not configured' },
    },
  },
});

export function healthRoutes(deps: () => HealthDeps): RouteDefinition[] {
  return [
    defineRoute({
      name: 'health',
      method: 'GET',
      path: 'health',
      summary: 'Whether this instance can serve: configuration valid, blob, queue and table storage reachable',
      description:
        'Loads the configuration and makes one cheap read per storage service with the app’s own identity. ' +
        'Anonymous, for load balancers and deployment smoke checks; it reveals no setting values, keys or URLs.',
      tags: ['operations'],
      responses: {
        200: { description: 'Healthy', schema: healthReport },
        503: {
          description: 'A check failed; `checks` says which (code DependencyUnavailable)',
          schema: problemSchema.extend({ checks }),
        },
      },
      handle: async () => {
        const report = await checkHealth(deps());
        const noStore = { 'cache-control': 'no-store' };
        if (report.status === 'healthy') return json(200, report, noStore);
        const failed = (Object.keys(report.checks) as CheckName[]).filter((name) => report.checks[name].status === 'fail');
        const err = new AppError('DependencyUnavailable', `Not healthy: ${failed.join(', ')} failed`, { extra: { checks: report.checks } });
        const result = problemResult(err, '/api/health');
        return { ...result, headers: { ...result.headers, ...noStore } };
      },
    }),
  ];
}
