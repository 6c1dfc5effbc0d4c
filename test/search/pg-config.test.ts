// The `search.postgres` section as users write it: a good one reaches the search settings; a URL
// that is not postgres://, a schema that is not an identifier, or an unknown key is refused with
// the file, line, field and what was expected.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigFileError, loadConfig } from '../../src/config/load.js';
import { searchSettingsOf } from '../../src/server/search-settings.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';

const SOURCES = 'sources:\n  - type: files\n    root: .\n';
let dir: string;

beforeAll(() => (dir = makeTempDir('reservoir-pg-config-')));
afterAll(() => removeTree(dir));

function load(text: string): ReturnType<typeof loadConfig> {
  const path = join(dir, 'reservoir.yaml');
  writeFileSync(path, `${SOURCES}${text}`);
  return loadConfig(path, { display: 'reservoir.yaml', env: {} });
}

function problems(text: string): string[] {
  try {
    load(text);
  } catch (error) {
    if (error instanceof ConfigFileError) return [...error.problems];
    throw error;
  }
  return [];
}

describe('search.postgres in the config file', () => {
  it('keeps the index in PostgreSQL, in the schema given', () => {
    const config = load(
      'search:\n  postgres:\n    url: postgres://reservoir@db:5432/reservoir\n    schema: team_search\n',
    );
    expect(searchSettingsOf(config, '/state').postgres).toEqual({
      url: 'postgres://reservoir@db:5432/reservoir',
      schema: 'team_search',
    });
  });

  it.each([
    [
      'a URL of another database',
      'search:\n  postgres:\n    url: mysql://root@db/test\n',
      'reservoir.yaml:6:5: search.postgres.url: expected a postgres:// URL',
    ],
    [
      'a schema that is not an identifier',
      'search:\n  postgres:\n    url: postgres://db/x\n    schema: "drop table; --"\n',
      'reservoir.yaml:7:5: search.postgres.schema: expected an SQL identifier (letters, digits, _)',
    ],
    [
      'no URL',
      'search:\n  postgres:\n    schema: team\n',
      'reservoir.yaml:5:3: search.postgres.url: required, expected a string',
    ],
  ])('refuses %s', (_name, text, expected) => {
    expect(problems(text)).toEqual([expected]);
  });
});
