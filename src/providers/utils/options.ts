/**
 * Option-parsing helpers shared by the providers' zod schemas: strict objects whose unknown keys
 * are reported with the keys they accept, and whole numbers with the message users see.
 */
import { z } from 'zod';

/** Marks an unknown-keys message so the config formatter can name the accepted keys (see config/messages.ts). */
export const UNKNOWN_KEYS_TAG = '\u0000known:';

/** A strict object whose unknown keys are reported with the keys it does accept. */
export function strict<Shape extends z.core.$ZodLooseShape>(shape: Shape, description: string) {
  const known = Object.keys(shape);
  return z
    .strictObject(shape, {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? { message: `${UNKNOWN_KEYS_TAG}${known.join(',')}` }
          : undefined,
    })
    .meta({ description });
}

/** A whole number in [min, max] ("expected a whole number" for anything else). */
export const wholeNumber = (min: number, max?: number) => {
  const n = z
    .int({
      error: (issue) => (issue.code === 'invalid_type' ? 'expected a whole number' : undefined),
    })
    .min(min);
  return max === undefined ? n : n.max(max);
};
