/**
 * What a request schema that normalises its input before validating it (`z.preprocess`) accepts,
 * for the OpenAPI document: zod can describe only the normalised form. Declare the accepted forms
 * next to the schema: `documentAcceptedInput(body, z.union([single, batch]))`.
 */
import type * as z from 'zod';

const accepted = new WeakMap<z.ZodType, z.ZodType>();

export function documentAcceptedInput<S extends z.ZodType>(schema: S, accepts: z.ZodType): S {
  accepted.set(schema, accepts);
  return schema;
}

/** The schema to document as the request form of `schema`. */
export function acceptedInputOf(schema: z.ZodType): z.ZodType {
  return accepted.get(schema) ?? schema;
}
