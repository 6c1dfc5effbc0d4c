// Issue 11, items 4 and 10 in the config file: `server.http.sessions` (per-principal session cap,
// initialize rate) and `server.http.tls` (certificate and key paths). The exact messages a user
// sees for each broken value, and how the values merge with the command line: TLS paths resolve
// against the config file's directory, `--tls-cert`/`--tls-key` replace the file's pair.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigFileError, loadConfig } from '../../src/config/load.js';
import { mergeSettings } from '../../src/config/merge.js';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';

const HEAD = 'sources:\n  - type: files\n    root: docs\nserver:\n  http:\n';

let dir: string;

beforeAll(() => {
  dir = makeTempDir('reservoir-http-limits-config-');
  writeTree(dir, { 'docs/a.md': '# a\n' });
});

afterAll(() => removeTree(dir));

function problems(name: string, text: string): string[] {
  const path = join(dir, `${name}.yaml`);
  writeFileSync(path, text);
  try {
    loadConfig(path, { display: 'reservoir.yaml', env: {} });
  } catch (error) {
    if (error instanceof ConfigFileError) return [...error.problems];
    throw error;
  }
  return [];
}

describe('broken server.http.sessions and server.http.tls', () => {
  it.each([
    [
      'a session cap of 0',
      `${HEAD}    sessions: { perPrincipal: 0 }\n`,
      ['reservoir.yaml:6:17: server.http.sessions.perPrincipal: expected at least 1, got 0'],
    ],
    [
      'a negative initialize rate',
      `${HEAD}    sessions: { initialize: { perSecond: -1 } }\n`,
      [
        'reservoir.yaml:6:31: server.http.sessions.initialize.perSecond: expected greater than 0, got -1',
      ],
    ],
    [
      'an unknown sessions key',
      `${HEAD}    sessions: { max: 5 }\n`,
      ['reservoir.yaml:6:17: server.http.sessions.max: unknown key'],
    ],
    [
      'tls without a key',
      `${HEAD}    tls: { cert: a.crt }\n`,
      ['reservoir.yaml:6:5: server.http.tls.key: required, expected a string'],
    ],
    [
      'tls with an empty certificate path',
      `${HEAD}    tls: { cert: "", key: a.key }\n`,
      ['reservoir.yaml:6:12: server.http.tls.cert: expected a non-empty string'],
    ],
  ])('reports %s with the field and what was expected', (name, text, expected) => {
    expect(problems(name.replaceAll(' ', '-'), text)).toEqual(expected);
  });
});

describe('merging', () => {
  it('resolves server.http.tls paths against the config file directory and keeps the sessions options', () => {
    const path = join(dir, 'ok.yaml');
    writeFileSync(
      path,
      `${HEAD}    tls: { cert: certs/site.crt, key: /etc/site.key }\n    sessions: { perPrincipal: 7 }\n`,
    );
    const settings = mergeSettings(loadConfig(path, { env: {} }), { roots: [], source: {} });
    expect(settings.http).toMatchObject({
      tls: { cert: join(dir, 'certs/site.crt'), key: '/etc/site.key' },
      sessions: { perPrincipal: 7 },
    });
  });

  it("lets --tls-cert/--tls-key replace the file's pair, resolved against the working directory", () => {
    const path = join(dir, 'ok2.yaml');
    writeFileSync(path, `${HEAD}    tls: { cert: a.crt, key: a.key }\n`);
    const settings = mergeSettings(loadConfig(path, { env: {} }), {
      roots: [],
      source: {},
      cwd: '/srv',
      tls: { cert: 'b.crt', key: 'b.key' },
    });
    expect(settings.http?.tls).toEqual({ cert: '/srv/b.crt', key: '/srv/b.key' });
  });
});
