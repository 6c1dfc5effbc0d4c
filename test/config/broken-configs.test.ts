// Pins the exact messages users see for broken config files: each row is a file as a user might
// write it and every line `reservoir check` / `reservoir serve` prints for it. Every message names
// the file (with line and column when known), the field path and what was expected.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigFileError, loadConfig } from '../../src/config/load.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';

interface Row {
  name: string;
  /** File name inside the temp dir (default reservoir.yaml). */
  file?: string;
  text: string;
  /** Lines of the error; `<dir>` stands for the temp dir. */
  expected: string[];
}

const SOURCES = 'sources:\n  - type: files\n    root: docs\n';

const ROWS: Row[] = [
  {
    name: 'YAML syntax error, with its line',
    text: 'sources:\n  - type: files\n    root: "docs\n',
    expected: ['reservoir.yaml:4:1: invalid YAML: Missing closing "quote'],
  },
  {
    name: 'YAML duplicate key',
    text: 'sources:\n  - type: files\n    root: docs\n    root: other\n',
    expected: ['reservoir.yaml:4:5: invalid YAML: Map keys must be unique'],
  },
  {
    name: 'a search budget of no time at all',
    text: `${SOURCES}search:\n  queryBudgetMs: 0\n`,
    expected: ['reservoir.yaml:5:3: search.queryBudgetMs: expected at least 1, got 0'],
  },
  {
    name: 'a memory reducer that is neither on/off nor a quiet period',
    text: `${SOURCES}server:\n  memoryReducer: sometimes\n`,
    expected: [
      "reservoir.yaml:5:3: server.memoryReducer: expected true or false or an object, got a string ('sometimes')",
    ],
  },
  {
    name: 'a memory reducer quiet period too short to see a burst end',
    text: `${SOURCES}server:\n  memoryReducer:\n    quietMs: 50\n`,
    expected: ['reservoir.yaml:6:5: server.memoryReducer.quietMs: expected at least 1000, got 50'],
  },
  {
    name: 'wrong type',
    text: 'sources:\n  - type: files\n    root: 42\n',
    expected: ['reservoir.yaml:3:5: sources[0].root: expected a string, got a number (42)'],
  },
  {
    name: 'unknown key (a typo) with a suggestion',
    text: `${SOURCES}    gitignor: false\n`,
    expected: ["reservoir.yaml:4:5: sources[0].gitignor: unknown key; did you mean 'gitignore'?"],
  },
  {
    name: 'unknown key without a close match lists the accepted keys',
    text: `${SOURCES}listen: 8080\n`,
    expected: [
      'reservoir.yaml:4:1: listen: unknown key; expected one of: $schema, sources, server, prompts, access, hints, search, tools, skills',
    ],
  },
  {
    name: 'missing root',
    text: 'sources:\n  - type: files\n',
    expected: ['reservoir.yaml:2:5: sources[0].root: required, expected a string'],
  },
  {
    name: 'root that does not exist (resolved against the config directory)',
    text: 'sources:\n  - type: files\n    root: nowhere\n',
    expected: ['reservoir.yaml:3:5: sources[0].root: <dir>/nowhere does not exist'],
  },
  {
    name: 'root that is a file',
    text: 'sources:\n  - type: files\n    root: notes.txt\n',
    expected: ['reservoir.yaml:3:5: sources[0].root: <dir>/notes.txt is a file, not a directory'],
  },
  {
    name: 'overlapping roots',
    text: `${SOURCES}  - type: files\n    root: docs/api\n`,
    expected: [
      'reservoir.yaml:5:5: sources[1].root: <dir>/docs/api overlaps sources[0].root (<dir>/docs); serve the outer one only',
    ],
  },
  {
    name: 'unknown source type',
    text: 'sources:\n  - type: gti\n    repo: .\n',
    expected: [
      "reservoir.yaml:2:5: sources[0].type: expected one of 'files', 'git', 'http', 'sql', 's3', got 'gti'",
    ],
  },
  {
    name: 'bad enum value',
    text: `${SOURCES}    watch: inotify\n`,
    expected: [
      "reservoir.yaml:4:5: sources[0].watch: expected one of 'native', 'poll', got 'inotify'",
    ],
  },
  {
    name: 'empty sources',
    text: 'sources: []\n',
    expected: ['reservoir.yaml:1:1: sources: expected at least one source, got an empty list'],
  },
  {
    name: 'no sources at all',
    text: 'server:\n  pageSize: 10\n',
    expected: ["reservoir.yaml:1:1: sources: required unless 'skills' is given, expected a list"],
  },
  {
    name: 'port out of range',
    text: `${SOURCES}server:\n  http:\n    port: 70000\n`,
    expected: ['reservoir.yaml:6:5: server.http.port: expected at most 65535, got 70000'],
  },
  {
    name: 'port written as a string',
    text: `${SOURCES}server:\n  http:\n    port: "8080"\n`,
    expected: [
      "reservoir.yaml:6:5: server.http.port: expected a whole number, got a string ('8080')",
    ],
  },
  {
    name: 'page size below 1',
    text: `${SOURCES}server:\n  pageSize: 0\n`,
    expected: ['reservoir.yaml:5:3: server.pageSize: expected at least 1, got 0'],
  },
  {
    name: 'source list budget below 1 ms',
    text: `${SOURCES}server:\n  sourceListTimeoutMs: 0\n`,
    expected: ['reservoir.yaml:5:3: server.sourceListTimeoutMs: expected at least 1, got 0'],
  },
  {
    name: 'missing environment variable',
    text: 'sources:\n  - type: files\n    root: ${RESERVOIR_TEST_UNSET_DIR}/docs\n',
    expected: [
      "reservoir.yaml:3:5: sources[0].root: environment variable 'RESERVOIR_TEST_UNSET_DIR' is not set",
    ],
  },
  {
    name: 'unterminated ${',
    text: `${SOURCES}server:\n  instructions: "costs \${5"\n`,
    expected: [
      "reservoir.yaml:5:3: server.instructions: '${' without a closing '}' (write '$${' for a literal '${')",
    ],
  },
  {
    name: 'duplicate prompt name',
    text: `${SOURCES}prompts:\n  - name: review\n    messages: [{ role: user, text: a }]\n  - name: review\n    messages: [{ role: user, text: b }]\n`,
    expected: [
      "reservoir.yaml:7:5: prompts[1].name: duplicate prompt name 'review' (also prompts[0].name)",
    ],
  },
  {
    name: 'duplicate argument name',
    text: `${SOURCES}prompts:\n  - name: review\n    arguments: [{ name: file }, { name: file }]\n    messages: [{ role: user, text: '{{file}}' }]\n`,
    expected: [
      "reservoir.yaml:6:35: prompts[0].arguments[1].name: duplicate argument name 'file' (also prompts[0].arguments[0].name)",
    ],
  },
  {
    name: 'placeholder naming no argument',
    text: `${SOURCES}prompts:\n  - name: review\n    arguments: [{ name: file }]\n    messages:\n      - role: user\n        text: Review {{fiel}}\n`,
    expected: [
      "reservoir.yaml:9:9: prompts[0].messages[0].text: '{{fiel}}' is not an argument of prompt 'review' (declared: file; write '\\{{' for a literal '{{')",
    ],
  },
  {
    name: 'message with both text and resource',
    text: `${SOURCES}prompts:\n  - name: review\n    messages:\n      - { role: user, text: hi, resource: docs/a.md }\n`,
    expected: [
      "reservoir.yaml:7:9: prompts[0].messages[0]: give either 'text' or 'resource', not both",
    ],
  },
  {
    name: 'bad role',
    text: `${SOURCES}prompts:\n  - name: review\n    messages:\n      - { role: system, text: hi }\n`,
    expected: [
      "reservoir.yaml:7:11: prompts[0].messages[0].role: expected one of 'user', 'assistant', got 'system'",
    ],
  },
  {
    name: 'bad completion source',
    text: `${SOURCES}prompts:\n  - name: review\n    arguments: [{ name: file, complete: paths }]\n    messages: [{ role: user, text: '{{file}}' }]\n`,
    expected: [
      "reservoir.yaml:6:31: prompts[0].arguments[0].complete: expected 'path' or a list, got a string ('paths')",
    ],
  },
  {
    name: 'empty file',
    text: '# nothing yet\n',
    expected: ["reservoir.yaml: the file is empty; expected an object with 'sources'"],
  },
  {
    name: 'top level is a list',
    text: '- type: files\n  root: docs\n',
    expected: ['reservoir.yaml:1:1: expected an object at the top level, got a list'],
  },
  {
    name: 'invalid JSON, with its line',
    file: 'reservoir.json',
    text: '{\n  "sources": [\n    { "type": "files", "root": "docs", }\n  ]\n}\n',
    expected: [
      "reservoir.json:3:40: invalid JSON: expected a property name in double quotes, got '}'",
    ],
  },
  {
    name: 'invalid JSON cut short',
    file: 'reservoir.json',
    text: '{\n  "sources": [\n',
    expected: ['reservoir.json:3:1: invalid JSON: expected a value, got the end of the file'],
  },
  {
    name: 'JSON with a wrong type, located by line',
    file: 'reservoir.json',
    text: '{\n  "sources": [\n    { "type": "files", "root": "docs", "maxReadBytes": -1 }\n  ]\n}\n',
    expected: ['reservoir.json:3:40: sources[0].maxReadBytes: expected at least 1, got -1'],
  },
  {
    name: 'several problems at once, in file order',
    text: 'sources:\n  - type: files\n    root: 7\nserver:\n  logLevel: loud\n',
    expected: [
      'reservoir.yaml:3:5: sources[0].root: expected a string, got a number (7)',
      "reservoir.yaml:5:3: server.logLevel: expected one of 'fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent', got 'loud'",
    ],
  },
  {
    name: 'an access rule naming a principal without its kind',
    text: `${SOURCES}access:\n  rules:\n    - principals: ['*', alice]\n      allow: ['**']\n`,
    expected: [
      "reservoir.yaml:6:25: access.rules[0].principals[1]: 'alice' does not say which kind of principal it is: write token:alice for the static token named alice, oauth:alice for the OAuth subject alice, anonymous, or * (a token name and an OAuth subject may be the same string)",
    ],
  },
];

let dir: string;

beforeAll(() => {
  dir = makeTempDir('reservoir-config-');
  mkdirSync(join(dir, 'docs', 'api'), { recursive: true });
  writeFileSync(join(dir, 'docs', 'a.md'), '# a\n');
  writeFileSync(join(dir, 'notes.txt'), 'notes\n');
});

afterAll(() => removeTree(dir));

function problemsFor(row: Row, index: number): string[] {
  const name = row.file ?? 'reservoir.yaml';
  const sub = join(dir, `case${index}`);
  mkdirSync(sub, { recursive: true });
  // Each case sits beside the shared tree: relative roots resolve against the config directory.
  const path = join(dir, `${index}-${name}`);
  writeFileSync(path, row.text);
  try {
    loadConfig(path, { display: name, env: {} });
  } catch (error) {
    if (error instanceof ConfigFileError) return [...error.problems];
    throw error;
  }
  return [];
}

describe('broken config files', () => {
  it('has at least 15 rows', () => expect(ROWS.length).toBeGreaterThanOrEqual(15));

  it.each(ROWS.map((row, index) => ({ ...row, index })))('$name', (row) => {
    expect(problemsFor(row, row.index)).toEqual(
      row.expected.map((line) => line.replaceAll('<dir>', dir)),
    );
  });
});

describe('a missing config file', () => {
  it('says the file cannot be read', () => {
    expect(() => loadConfig(join(dir, 'none.yaml'), { display: 'none.yaml' })).toThrow(
      'none.yaml: cannot read the config file: no such file',
    );
  });
});
