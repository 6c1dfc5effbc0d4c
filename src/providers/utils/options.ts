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

/**
 * The one name no argument may have: the SDK reads a tool's input schema and the arguments of
 * `tools/call` and `prompts/get` into plain objects, where `__proto__` sets the prototype instead of
 * adding a member, so an argument so named never shows and never arrives. Anything else may be an
 * argument's name — `constructor` and `toString` too (docs/design.md, "Names are data").
 */
export const UNPASSABLE_NAME = '__proto__';

/** Why `__proto__` is refused as `what` (a prompt argument's name, a query parameter's, …). */
export function unpassableNameMessage(what: string): string {
  return `'${UNPASSABLE_NAME}' is not allowed as ${what}: MCP clients drop an argument so named (it names a JavaScript object's prototype); rename it`;
}

/** `schema` (a string) refusing `__proto__`, with the message users see, as `what`. */
export function passableName(schema: z.ZodString, what: string): z.ZodString {
  return schema.refine((name) => name !== UNPASSABLE_NAME, {
    error: unpassableNameMessage(what),
  });
}
