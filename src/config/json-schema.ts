/**
 * The JSON Schema of the config file, generated from the zod schema (so the two cannot drift;
 * a test compares it with the committed schema/reservoir.schema.json). Editors use it for
 * completion and checking as you type; see docs/config.md.
 */
import { z } from 'zod';
import { ConfigSchema } from './schema.js';

/**
 * The schema's identifier: a name, not a location. The file ships in the npm package under
 * schema/, and editors find it by path (`./node_modules/mcp-reservoir/schema/reservoir.schema.json`,
 * or what `reservoir schema --path` prints); no server hosts it, so no URL here would resolve.
 */
export const SCHEMA_ID = 'urn:mcp-reservoir:config-schema';

export function configJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(ConfigSchema, { target: 'draft-2020-12', io: 'input' }) as Record<
    string,
    unknown
  >;
  const { $schema, ...rest } = schema;
  return { $schema, $id: SCHEMA_ID, title: 'Reservoir configuration', ...rest };
}

/** The schema file's exact text. */
export function configJsonSchemaText(): string {
  return `${JSON.stringify(configJsonSchema(), null, 2)}\n`;
}
