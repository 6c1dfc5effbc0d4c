// Pins the refusal of `__proto__`, `constructor` and `prototype` keys anywhere in a config file, YAML
// or JSON: `reservoir check` names each one with its line and path and exits 1 (it used to say
// "valid" while the key changed what the file read as — a top-level `__proto__` even supplied the
// sources), and `reservoir serve` refuses the same file before serving, over stdio and HTTP.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli } from '../helpers/build.js';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';

const WHY =
  'is not allowed as a key: it could change how the rest of the file is read; rename or remove it';

const CASES: { name: string; file: string; text: string; expected: string[] }[] = [
  {
    name: 'a YAML __proto__ inside a source, carrying a setting',
    file: 'proto.yaml',
    text: 'sources:\n  - type: files\n    root: docs\n    __proto__:\n      maxReadBytes: 5\n',
    expected: [`proto.yaml:4:5: sources[0].__proto__: '__proto__' ${WHY}`],
  },
  {
    name: 'a quoted YAML constructor at the top level and a prototype under server.http',
    file: 'both.yaml',
    text: 'sources:\n  - type: files\n    root: docs\n"constructor": {}\nserver:\n  http:\n    prototype: { port: 1 }\n',
    expected: [
      `both.yaml:4:1: constructor: 'constructor' ${WHY}`,
      `both.yaml:7:5: server.http.prototype: 'prototype' ${WHY}`,
    ],
  },
  {
    name: 'a JSON __proto__ at the top level that would supply the sources',
    file: 'top.json',
    text: '{\n  "__proto__": { "sources": [{ "type": "files", "root": "docs" }] }\n}\n',
    expected: [`top.json:2:3: __proto__: '__proto__' ${WHY}`],
  },
  {
    name: 'a JSON constructor as a user-chosen name (a named SQL query)',
    file: 'query.json',
    text: '{\n  "sources": [\n    { "type": "sql", "path": "shop.db", "queries": { "constructor": { "sql": "SELECT 1" } } }\n  ]\n}\n',
    expected: [`query.json:3:54: sources[0].queries.constructor: 'constructor' ${WHY}`],
  },
];

let dir: string;

beforeAll(async () => {
  await ensureBuilt();
  dir = makeTempDir('reservoir-config-keys-');
  writeTree(dir, { 'docs/a.md': '# a\n' });
  for (const c of CASES) writeFileSync(join(dir, c.file), c.text);
});

afterAll(() => removeTree(dir));

describe('config keys that name the object model', () => {
  it.each(CASES)('reservoir check refuses $name, naming the path', async ({ file, expected }) => {
    expect(await runCli(['check', '--config', file], dir)).toEqual({
      code: 1,
      stdout: '',
      stderr: `${expected.join('\n')}\n`,
    });
  });

  it.each(CASES)(
    'reservoir serve refuses $name before serving, over stdio and HTTP',
    async ({ file, expected }) => {
      const runs = await Promise.all([
        runCli(['serve', '--config', file], dir),
        runCli(['serve', '--config', file, '--http', '127.0.0.1:0'], dir),
      ]);
      for (const run of runs) {
        expect(run.code).toBe(1);
        expect(run.stdout).toBe('');
        for (const line of expected) expect(run.stderr).toContain(line);
      }
    },
  );
});
