/**
 * A counter's settings: how increments are stored (`hits` rows or `sharded` totals), over how many
 * partitions, and the safety window of its rollup. Both modes keep a total row per partition and
 * read "total + pending hits", so the modes share one read path.
 */
import * as z from 'zod';

import type { CounterSettings } from './settings';
import { maxPartitions } from './keys';

export const counterModes = ['hits', 'sharded'] as const;
export type CounterMode = (typeof counterModes)[number];

export interface CounterDefinition {
  readonly mode: CounterMode;
  readonly partitions: number;
  readonly safetyWindowSeconds: number;
}

const maxSafetyWindowSeconds = 3600;

export const definitionFields = {
  mode: z.enum(counterModes).meta({
    description:
      '`hits`: one row per increment, folded into a summary by the rollup. `sharded`: one total per partition, each increment an ETag update.',
  }),
  partitions: z
    .int()
    .min(1)
    .max(maxPartitions)
    .meta({ description: 'Partitions (hits mode) or shards (sharded mode) the increments spread over.' }),
  safetyWindowSeconds: z
    .int()
    .min(0)
    .max(maxSafetyWindowSeconds)
    .meta({ description: 'Hits younger than this are not folded yet: the clock skew and write latency the rollup tolerates.' }),
};

export type CounterDefinitionInput = Partial<CounterDefinition>;

export function resolveDefinition(input: CounterDefinitionInput, defaults: CounterSettings): CounterDefinition {
  return {
    mode: input.mode ?? 'hits',
    partitions: input.partitions ?? defaults.defaultPartitions,
    safetyWindowSeconds: input.safetyWindowSeconds ?? defaults.defaultSafetyWindowSeconds,
  };
}

/** Fields whose change would move where data lives; refused once a counter has data. */
export function structuralDifferences(current: CounterDefinition, next: CounterDefinition): ('mode' | 'partitions')[] {
  const fields: ('mode' | 'partitions')[] = [];
  if (current.mode !== next.mode) fields.push('mode');
  if (current.partitions !== next.partitions) fields.push('partitions');
  return fields;
}

export function sameDefinition(a: CounterDefinition, b: CounterDefinition): boolean {
  return a.mode === b.mode && a.partitions === b.partitions && a.safetyWindowSeconds === b.safetyWindowSeconds;
}
