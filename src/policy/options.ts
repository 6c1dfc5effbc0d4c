/**
 * Options of every policy factory are checked once, when the step is built (Hono's middleware
 * habit): a bad value is a ConfigError naming the field, never a surprise on the first request.
 */
import type { z } from 'zod';
import { ConfigError } from '../core/errors.js';

/** Parses `value` with `schema`; the first issue becomes a ConfigError on `<prefix>.<path>`. */
export function parseOptions<S extends z.ZodType>(
  schema: S,
  value: unknown,
  prefix: string,
): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path =
    issue === undefined || issue.path.length === 0
      ? prefix
      : `${prefix}.${issue.path.map(String).join('.')}`;
  throw new ConfigError(path, issue?.message ?? 'invalid options', {
    issues: parsed.error.issues.length,
  });
}
