// Typed tools made from resource templates (`tools: { fromTemplates: true }`), through the built CLI
// over a real stdio pipe: a git source's `git://app/{ref}/{+path}` is offered as
// `read_app_file(ref, path)`, with the repository's refs as the `ref` enum, and reads exactly what
// read_resource reads; names are valid and unique; access rules apply as to resources/read; bad
// arguments are answered with errors naming them. And every tool offered — built-in, source and
// template tools — has an input schema strict hosts take (OpenAI strict mode, Gemini): closed
// objects, every property required, no type arrays, portable keywords only.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSqliteDriver } from '../../src/core/sqlite-driver.js';
import { PORTABLE_KEYWORDS } from '../../src/core/portable-schema.js';
import { templateToolName, templateVariables } from '../../src/tools/template-tools.js';
import { ensureBuilt } from '../helpers/build.js';
import { Cleanup, connectStdio } from '../helpers/clients.js';
import { commit, git, makeRepo } from '../providers/git-helpers.js';
import { tempDir } from '../providers/helpers.js';

const cleanup = new Cleanup();
let dir: string;
let repo: string;
let client: Client;

beforeAll(async () => {
  await ensureBuilt();
  repo = makeRepo({ 'README.md': '# App\n', 'src/main.ts': 'export const v = 1;\n' });
  git(repo, 'tag', 'v1');
  commit(repo, { 'src/main.ts': 'export const v = 2;\n' }, 'two');
  dir = tempDir('reservoir-template-tools-');
  mkdirSync(join(dir, 'docs'));
  writeFileSync(join(dir, 'docs', 'guide.md'), '# Guide\n');
  const Database = loadSqliteDriver();
  const db = new Database(join(dir, 'shop.db'));
  db.exec(
    "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO items VALUES (1, 'pen');",
  );
  db.close();
  const config = join(dir, 'reservoir.yaml');
  writeFileSync(
    config,
    [
      'sources:',
      '  - type: files',
      '    root: docs',
      '  - type: git',
      `    path: ${repo}`,
      '    name: app',
      '  - type: sql',
      '    path: shop.db',
      '    queryTool: true',
      'tools:',
      '  fromTemplates: true',
      '',
    ].join('\n'),
  );
  ({ client } = await connectStdio('2025', [], ['--config', config], cleanup));
});

afterAll(async () => {
  await cleanup.run();
  rmSync(dir, { recursive: true, force: true });
  rmSync(repo, { recursive: true, force: true });
});

async function allTools(): Promise<Awaited<ReturnType<Client['listTools']>>['tools']> {
  const tools: Awaited<ReturnType<Client['listTools']>>['tools'] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}

/** Every way a schema could be refused by a strict host, as `path: problem` lines. */
function strictProblems(schema: unknown, path = '$'): string[] {
  if (schema === null || typeof schema !== 'object') return [];
  const s = schema as Record<string, unknown>;
  const problems: string[] = [];
  for (const key of Object.keys(s))
    if (!PORTABLE_KEYWORDS.has(key)) problems.push(`${path}: keyword ${key}`);
  if (Array.isArray(s['type'])) problems.push(`${path}: type array`);
  if (s['type'] === undefined && s['anyOf'] === undefined && s['enum'] === undefined)
    problems.push(`${path}: no type`);
  if (s['type'] === 'object') {
    const properties = (s['properties'] ?? {}) as Record<string, unknown>;
    if (s['additionalProperties'] !== false)
      problems.push(`${path}: additionalProperties not false`);
    const required = (s['required'] ?? []) as string[];
    for (const name of Object.keys(properties)) {
      if (!required.includes(name)) problems.push(`${path}.${name}: not required`);
      problems.push(...strictProblems(properties[name], `${path}.${name}`));
    }
  }
  if (s['items'] !== undefined) problems.push(...strictProblems(s['items'], `${path}[]`));
  for (const [i, option] of ((s['anyOf'] ?? []) as unknown[]).entries())
    problems.push(...strictProblems(option, `${path}|${i}`));
  return problems;
}

describe('tools from templates', () => {
  it('offers git://app/{ref}/{+path} as read_app_file(ref, path), with the refs as an enum', async () => {
    const tools = await allTools();
    const tool = tools.find((t) => t.name === 'read_app_file');
    expect(tool).toBeDefined();
    expect(tool!.description).toContain('git://app/{ref}/{+path}');
    expect(tool!.inputSchema).toMatchObject({
      type: 'object',
      required: ['ref', 'path'],
      additionalProperties: false,
      properties: { path: { type: 'string' } },
    });
    const ref = tool!.inputSchema.properties!['ref'] as { enum?: string[] };
    expect(ref.enum).toEqual(expect.arrayContaining(['main', 'v1']));
    expect(tool!.annotations).toMatchObject({ readOnlyHint: true });
  });

  it('reads what read_resource reads for the URI its arguments make', async () => {
    const typed = await client.callTool({
      name: 'read_app_file',
      arguments: { ref: 'v1', path: 'src/main.ts' },
    });
    const byUri = await client.callTool({
      name: 'read_resource',
      arguments: { uri: 'git://app/v1/src/main.ts' },
    });
    expect(typed.isError).not.toBe(true);
    expect(typed.content).toEqual(byUri.content);
    expect(JSON.stringify(typed.content)).toContain('export const v = 1;');
    const main = await client.callTool({
      name: 'read_app_file',
      arguments: { ref: 'main', path: 'src/main.ts' },
    });
    expect(JSON.stringify(main.content)).toContain('export const v = 2;');
  });

  it('answers bad arguments with errors that name them', async () => {
    // A value outside the enum: a protocol error or an isError result (as argument errors are answered), naming it.
    const unknownRef = await client
      .callTool({ name: 'read_app_file', arguments: { ref: 'nope', path: 'README.md' } })
      .then(
        (result) => JSON.stringify(result.content),
        (error: Error) => error.message,
      );
    expect(unknownRef).toMatch(/'ref'.*main.*v1/);
    const emptyPath = await client.callTool({
      name: 'read_app_file',
      arguments: { ref: 'main', path: '' },
    });
    expect(emptyPath.isError).toBe(true);
    expect(JSON.stringify(emptyPath.content)).toContain('The argument path is empty');
    const traversal = await client.callTool({
      name: 'read_app_file',
      arguments: { ref: 'main', path: '../../../etc/passwd' },
    });
    expect(traversal.isError).toBe(true);
    expect(JSON.stringify(traversal.content)).not.toContain('root:');
  });

  it('gives each template a valid, unique name within the hosts’ length limit', async () => {
    const tools = await allTools();
    const names = tools.map((t) => t.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/);
    // Every template became a tool: files, git (file, history, log, commit) and sql.
    for (const expected of ['read_file', 'read_file_lines', 'read_app_history', 'read_app_commit'])
      expect(names).toContain(expected);
    expect(names.some((n) => n.startsWith('read_shop_table_rows'))).toBe(true);
  });

  it('offers every tool with an input schema strict hosts take', async () => {
    const tools = await allTools();
    expect(tools.length).toBeGreaterThan(8);
    const problems = tools.flatMap((t) =>
      strictProblems(t.inputSchema).map((p) => `${t.name} ${p}`),
    );
    expect(problems).toEqual([]);
  });

  it('offers no output schema with a bare boolean where a schema object is expected', async () => {
    // The Inspector's --strict check refused search_resources' highlights (a tuple's `items: false`).
    const bare = (schema: unknown, path: string): string[] => {
      if (schema === true || schema === false) return [path];
      if (schema === null || typeof schema !== 'object') return [];
      return Object.entries(schema as Record<string, unknown>).flatMap(([key, value]) =>
        key === 'additionalProperties' && typeof value === 'boolean'
          ? []
          : ['required', 'enum', 'const', 'default', 'examples'].includes(key)
            ? []
            : Array.isArray(value)
              ? value.flatMap((item, i) => bare(item, `${path}.${key}[${i}]`))
              : bare(value, `${path}.${key}`),
      );
    };
    const tools = await allTools();
    const outputs = tools.filter((t) => t.outputSchema !== undefined);
    expect(outputs.map((t) => t.name)).toContain('search_resources');
    expect(outputs.flatMap((t) => bare(t.outputSchema, t.name))).toEqual([]);
  });

  it('takes null for an optional argument of a built-in tool, as strict hosts send it', async () => {
    const listed = await client.callTool({
      name: 'list_resources',
      arguments: { cursor: null, limit: null },
    });
    expect(listed.isError).not.toBe(true);
    const rows = await client.callTool({
      name: (await allTools()).find((t) => t.name.startsWith('read_shop_table_rows'))!.name,
      arguments: { table: 'items', after: null, limit: '', format: null },
    });
    expect(JSON.stringify(rows.content)).toContain('pen');
  });
});

describe('template tool names and variables', () => {
  it('are sanitised, bounded and made unique', () => {
    const taken = new Set(['read_app_file']);
    expect(templateToolName('app-file', taken)).toBe('read_app_file_2');
    expect(templateToolName('Ünïcode Name!!', new Set())).toBe('read_n_code_name');
    expect(templateToolName('---', new Set())).toBe('read_template');
    const long = templateToolName('x'.repeat(200), new Set());
    expect(long.length).toBe(64);
    const second = templateToolName('x'.repeat(200), new Set([long]));
    expect(second.length).toBe(64);
    expect(second.endsWith('_2')).toBe(true);
  });

  it('are read from every expression, each once, with their operators', () => {
    expect(templateVariables('git://app/{ref}/{+path}{?lines}')).toEqual([
      { name: 'ref', optional: false, reserved: false },
      { name: 'path', optional: false, reserved: true },
      { name: 'lines', optional: true, reserved: false },
    ]);
    expect(templateVariables('x://{a}/{a}{?b,c*}{&d:3}').map((v) => v.name)).toEqual([
      'a',
      'b',
      'c',
      'd',
    ]);
  });
});
