// Pins that the JSON Schema shipped in schema/ is exactly what the zod schema generates now
// (regenerate with `npm run schema`), and that it describes the files the loader accepts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configJsonSchema, configJsonSchemaText } from '../../src/config/json-schema.js';
import { REPO_ROOT } from '../helpers/build.js';

describe('schema/reservoir.schema.json', () => {
  it('is what the zod schema generates now (run `npm run schema` after changing src/config/schema.ts)', () => {
    expect(readFileSync(join(REPO_ROOT, 'schema', 'reservoir.schema.json'), 'utf8')).toBe(
      configJsonSchemaText(),
    );
  });

  it('is closed (no unknown keys); sources is optional, since a file may serve only skills', () => {
    const schema = configJsonSchema();
    expect(schema).toMatchObject({ type: 'object', additionalProperties: false });
    expect(schema['required']).toBeUndefined();
    expect(Object.keys(schema['properties'] as object)).toEqual([
      '$schema',
      'sources',
      'server',
      'prompts',
      'access',
      'hints',
      'search',
      'tools',
      'skills',
    ]);
  });
});
