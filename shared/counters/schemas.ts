/** The HTTP shapes of the counters API (request validation and the OpenAPI document). */
import * as z from 'zod';

import { acceptedSchema } from '../http/operation';

import { pageOf } from '../http/paging';
import { resourceName } from '../http/schemas';
import { counterModes, definitionFields } from './definition';

/** The hard ceiling of |by|; TALLYHO_COUNTERS_MAX_INCREMENT (at most this) is checked by the service. */
const incrementCeiling = 1_000_000_000;

export const counterParams = z.object({ name: resourceName });

export const counterSettingsInput = z
  .strictObject({
    mode: definitionFields.mode.optional(),
    partitions: definitionFields.partitions.optional(),
    safetyWindowSeconds: definitionFields.safetyWindowSeconds.optional(),
  })
  .meta({
    id: 'CounterSettingsRequest',
    description:
      'Omitted settings take their defaults: mode `hits`, TALLYHO_COUNTERS_DEFAULT_PARTITIONS partitions, TALLYHO_COUNTERS_SAFETY_WINDOW_SECONDS.',
    example: { mode: 'hits', partitions: 8, safetyWindowSeconds: 60 },
  });

export const counterView = z
  .object({
    name: z.string(),
    mode: z.enum(counterModes),
    partitions: z.int(),
    safetyWindowSeconds: z.int(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Counter', description: 'A counter and its settings.' });

export const counterList = pageOf(counterView, 'CounterList', 'Counters in name order, with their settings (read each for its value).', {
  unreadable: true,
});

export const incrementBody = z
  .strictObject({
    by: z
      .int()
      .min(-incrementCeiling)
      .max(incrementCeiling)
      .refine((v) => v !== 0, { message: 'Must not be 0' })
      .optional()
      .meta({ description: 'What to add (default 1); negative for an adjustment. |by| <= TALLYHO_COUNTERS_MAX_INCREMENT.' }),
  })
  .optional()
  .meta({ id: 'CounterIncrementRequest', example: { by: 1 } });

export const incrementResult = acceptedSchema(
  z.object({ name: z.string(), by: z.int() }),
  'CounterIncrementAccepted',
  'The increment is stored; it shows in reads at once (at `statusUri`), and the rollup folds it later.',
);

export const readQuery = z.object({
  consistent: z
    .enum(['true', 'false'])
    .optional()
    .transform((v) => v === 'true')
    .meta({
      description:
        'true: also count hits that arrived too late for the watermark, checked against a concurrent rollup (2 requests per partition).',
    }),
});

export const counterValue = z
  .object({
    name: z.string(),
    mode: z.enum(counterModes),
    value: z.int(),
    watermark: z.string().nullable().meta({ description: 'The newest rollup cutoff reached (ISO time); null before the first rollup.' }),
    pendingHits: z.int().meta({ description: 'Hit rows not yet folded into a summary, counted one by one by this read.' }),
    consistent: z.boolean(),
  })
  .meta({ id: 'CounterValue' });

export const counterFigures = z
  .object({
    readAt: z.string().meta({ description: 'When the dirty index was read (the server clock)' }),
    rollupLagSeconds: z.number().meta({
      description:
        'Age of the oldest minute with hits not folded yet (0: none): what the tallyho.counter.rollup.lag gauge reports. About the ' +
        'safety window plus a minute while the rollup keeps up.',
    }),
    oldestUnfoldedAt: z.string().nullable().meta({ description: 'The start of that minute' }),
    partitionsWaiting: z.number().int().meta({ description: 'Counter partitions with hits not folded yet' }),
    countersWaiting: z.array(z.string()).meta({ description: 'Counters with hits not folded yet, in name order (at most 20)' }),
    truncated: z
      .boolean()
      .meta({ description: 'More rows or names than one read takes (1,000 rows, 20 names): the counts are lower bounds' }),
  })
  .meta({ id: 'CounterFigures', description: "How far the rollup is behind, read now from the counters' dirty index." });
