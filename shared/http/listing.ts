/** The shape of the operator listings (`GET /api/<capability>`): a page of items plus unreadable rows. */
import { z } from 'zod';

const defaultListLimit = 100;

export const listQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(1000).default(defaultListLimit).meta({ description: 'At most this many.' }),
});

const unreadable = z
  .array(z.object({ name: z.string(), detail: z.string() }))
  .meta({ description: 'Entries whose stored state could not be read (CorruptState), with why; they need an operator.' });

export function listingOf<T extends z.ZodType>(item: T, id: string, description: string) {
  return z
    .object({
      items: z.array(item),
      unreadable,
      truncated: z.boolean().meta({ description: 'More exist than `limit`.' }),
    })
    .meta({ id, description });
}
