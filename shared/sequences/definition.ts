/**
 * What a sequence is: where it starts, how its numbers are written, and the bounds of its block
 * policy. Fixed when the sequence is created — changing the prefix, width or check digit would make
 * numbers already handed out fail validation — so a PUT with different values is a 409.
 */
import * as z from 'zod';

/** The largest number any sequence issues: beyond it a JavaScript number loses integer precision. */
export const maxSequenceValue = Number.MAX_SAFE_INTEGER;

const definitionLimits = {
  prefixMaxLength: 20,
  widthMax: 16,
  blockSizeMax: 1_000_000,
  refillTargetSecondsMax: 3600,
} as const;

export interface BlockSizeBounds {
  readonly min: number;
  readonly max: number;
}

export interface SequenceDefinition {
  /** The first number the sequence issues. */
  readonly start: number;
  /** Written before the digits, as is (include your own separator: `ORD-`). */
  readonly prefix: string;
  /** Minimum number of digits; shorter numbers are zero-padded, longer ones are written in full. */
  readonly width: number;
  /** Append `-` and a Damm check digit. */
  readonly checkDigit: boolean;
  /** Bounds for the adaptive block size (numbers reserved per storage write). */
  readonly blockSize: BlockSizeBounds;
  /** The block size adapts toward one refill per this many seconds per instance. */
  readonly refillTargetSeconds: number;
}

export const defaultDefinition: SequenceDefinition = {
  start: 1,
  prefix: '',
  width: 7,
  checkDigit: true,
  blockSize: { min: 10, max: 100_000 },
  refillTargetSeconds: 10,
};

/** Each field's own rule; the request schema and the stored-entity parser share them. */
export const definitionFields = {
  start: z.int().min(0).max(maxSequenceValue),
  prefix: z
    .string()
    .max(definitionLimits.prefixMaxLength)
    .regex(/^[A-Za-z0-9_-]*$/, `Use up to ${definitionLimits.prefixMaxLength} letters, digits, "-" or "_"`),
  width: z.int().min(1).max(definitionLimits.widthMax),
  checkDigit: z.boolean(),
  blockSize: z.int().min(1).max(definitionLimits.blockSizeMax),
  refillTargetSeconds: z.int().min(1).max(definitionLimits.refillTargetSecondsMax),
};

const settingsFields = {
  start: definitionFields.start.optional().meta({ description: 'First number issued (default 1).' }),
  prefix: definitionFields.prefix.optional().meta({ description: 'Written before the digits, as is (default none).', example: 'ORD-' }),
  width: definitionFields.width.optional().meta({ description: 'Minimum digits; shorter numbers are zero-padded (default 7).' }),
  checkDigit: definitionFields.checkDigit.optional().meta({ description: 'Append "-" and a Damm check digit (default true).' }),
  blockSize: z
    .strictObject({ min: definitionFields.blockSize.optional(), max: definitionFields.blockSize.optional() })
    .optional()
    .meta({ description: 'Bounds of the adaptive block size (default 10 to 100000).' }),
  refillTargetSeconds: definitionFields.refillTargetSeconds
    .optional()
    .meta({ description: 'Block size adapts toward one refill per this interval per instance (default 10).' }),
};

export type SequenceSettingsInput = z.output<z.ZodObject<typeof settingsFields>>;

/** The definition a request asks for, with omitted fields taken from `base`. */
export function resolveDefinition(input: SequenceSettingsInput, base: SequenceDefinition = defaultDefinition): SequenceDefinition {
  return {
    start: input.start ?? base.start,
    prefix: input.prefix ?? base.prefix,
    width: input.width ?? base.width,
    checkDigit: input.checkDigit ?? base.checkDigit,
    blockSize: { min: input.blockSize?.min ?? base.blockSize.min, max: input.blockSize?.max ?? base.blockSize.max },
    refillTargetSeconds: input.refillTargetSeconds ?? base.refillTargetSeconds,
  };
}

/** Problems with a complete definition, as field issues (empty when it is usable). */
export function definitionProblems(d: SequenceDefinition): { path: (string | number)[]; message: string }[] {
  const problems: { path: (string | number)[]; message: string }[] = [];
  if (d.blockSize.min > d.blockSize.max) {
    problems.push({ path: ['blockSize', 'min'], message: `must not exceed blockSize.max (${d.blockSize.max})` });
  }
  // The first block must fit below the precision limit; later blocks are clamped to it.
  if (d.start > maxSequenceValue - d.blockSize.max + 1) {
    problems.push({
      path: ['start'],
      message: `start + blockSize.max must not pass ${maxSequenceValue} (Number.MAX_SAFE_INTEGER); at most ${maxSequenceValue - d.blockSize.max + 1}`,
    });
  }
  return problems;
}

export const sequenceSettingsInput = z
  .strictObject(settingsFields)
  .superRefine((input, ctx) => {
    for (const problem of definitionProblems(resolveDefinition(input))) ctx.addIssue({ code: 'custom', ...problem });
  })
  .meta({
    id: 'SequenceSettingsInput',
    description: 'Settings for a new sequence; every field is optional. Unknown fields are rejected.',
    example: { prefix: 'ORD-', width: 7, checkDigit: true },
  });

export interface DefinitionDifference {
  readonly field: string;
  readonly existing: unknown;
  readonly requested: unknown;
}

/** The fields a request names with a value other than the stored one (omitted fields never differ). */
export function definitionDifferences(existing: SequenceDefinition, input: SequenceSettingsInput): DefinitionDifference[] {
  const requested = resolveDefinition(input, existing);
  const pairs: [string, unknown, unknown][] = [
    ['start', existing.start, requested.start],
    ['prefix', existing.prefix, requested.prefix],
    ['width', existing.width, requested.width],
    ['checkDigit', existing.checkDigit, requested.checkDigit],
    ['blockSize.min', existing.blockSize.min, requested.blockSize.min],
    ['blockSize.max', existing.blockSize.max, requested.blockSize.max],
    ['refillTargetSeconds', existing.refillTargetSeconds, requested.refillTargetSeconds],
  ];
  return pairs.filter(([, a, b]) => a !== b).map(([field, a, b]) => ({ field, existing: a, requested: b }));
}
