// Pins the refusal of `__proto__` as the name of anything a client passes as an argument: a prompt
// argument, a named query's parameter, an HTTP endpoint's URI variable. The SDK reads a tool's input
// schema and the arguments of `tools/call` and `prompts/get` into plain objects, where `__proto__`
// sets the prototype, so such an argument vanished from the template tool's schema and never
// arrived, while `reservoir check` called the file valid. Now check and serve name the value.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli } from '../helpers/build.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';

const WHY = (what: string): string =>
  `'__proto__' is not allowed as ${what}: MCP clients drop an argument so named (it names a JavaScript object's prototype); rename it`;

const CASES: { name: string; file: string; text: string; expected: string }[] = [
  {
    name: "a prompt argument's name",
    file: 'prompt.yaml',
    text: [
      'prompts:',
      '  - name: review',
      '    arguments:',
      '      - { name: topic }',
      '      - { name: __proto__ }',
      '    messages: [{ role: user, text: "{{topic}} {{__proto__}}" }]',
      '',
    ].join('\n'),
    expected: `prompt.yaml:5:11: prompts[0].arguments[1].name: ${WHY('the name of a prompt argument')}`,
  },
  {
    name: "a named query's parameter name",
    file: 'query.json',
    text: '{\n  "sources": [\n    { "type": "sql", "path": "shop.db", "queries": { "echo": { "sql": "SELECT ?", "params": [{ "name": "__proto__" }] } } }\n  ]\n}\n',
    expected: `query.json:3:96: sources[0].queries.echo.params[0].name: ${WHY('the name of a query parameter')}`,
  },
  {
    name: "an HTTP endpoint's URI variable",
    file: 'endpoint.yaml',
    text: [
      'sources:',
      '  - type: http',
      '    name: api',
      '    baseUrl: https://api.example.com/',
      '    endpoints:',
      '      - name: item',
      '        uri: items/{__proto__}',
      '        upstream: items/{__proto__}',
      '',
    ].join('\n'),
    expected: `endpoint.yaml:7:9: sources[0].endpoints[0].uri: ${WHY('the name of a URI variable')}`,
  },
];

let dir: string;

beforeAll(async () => {
  await ensureBuilt();
  dir = makeTempDir('reservoir-argument-names-');
  for (const c of CASES) writeFileSync(join(dir, c.file), c.text);
});

afterAll(() => removeTree(dir));

describe('__proto__ as the name of an argument a client passes', () => {
  it.each(CASES)('reservoir check refuses $name, naming the path', async ({ file, expected }) => {
    expect(await runCli(['check', '--config', file], dir)).toEqual({
      code: 1,
      stdout: '',
      stderr: `${expected}\n`,
    });
  });

  it.each(CASES)('reservoir serve refuses $name before serving', async ({ file, expected }) => {
    const run = await runCli(['serve', '--config', file], dir);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(expected);
  });
});
