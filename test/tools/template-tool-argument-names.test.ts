// A template variable may be called anything, `valueOf` and `toString` too: through the built CLI
// over stdio, a template tool's optional argument so named and left out (null, or absent) leaves the
// variable out, as any other optional argument does. The arguments were plain objects read by name
// — by zod's check and by the template's expansion — so a left-out `valueOf` was Object.prototype's
// function: refused as "received function", or, past the check, its source text sent as the value.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { loadSqliteDriver } from '../../src/core/sqlite-driver.js';
import { ensureBuilt } from '../helpers/build.js';
import { Cleanup, connectStdio } from '../helpers/clients.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';

const cleanup = new Cleanup();
let client: Client;

beforeAll(async () => {
  await ensureBuilt();
  const dir = makeTempDir('reservoir-template-names-');
  cleanup.add(() => removeTree(dir));
  const Database = loadSqliteDriver();
  const db = new Database(join(dir, 's.db'));
  db.exec('CREATE TABLE items (id INTEGER PRIMARY KEY)');
  db.close();
  writeFileSync(
    join(dir, 'reservoir.yaml'),
    [
      'sources:',
      '  - type: sql',
      '    path: s.db',
      '    name: shop',
      '    queries:',
      '      echo:',
      '        sql: SELECT ? AS v, ? AS t',
      '        params: [{ name: valueOf, required: false }, { name: toString, required: false }]',
      'tools:',
      '  fromTemplates: true',
      '',
    ].join('\n'),
  );
  ({ client } = await connectStdio('2025', [], ['--config', join(dir, 'reservoir.yaml')], cleanup));
});

afterAll(() => cleanup.run());

describe('a template tool whose arguments are named after Object.prototype members', () => {
  it.each([
    [{ valueOf: null, toString: null }, [[null, null]]],
    [{}, [[null, null]]],
    [{ valueOf: 'x', toString: null }, [['x', null]]],
    [{ valueOf: null, toString: 'y' }, [[null, 'y']]],
  ])('%j leaves out what is not given', async (args, rows) => {
    const result = await client.callTool({ name: 'read_shop_query_echo', arguments: args });
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    const first = (result.content as { type: string; text?: string }[])[0]!;
    expect(JSON.parse(first.text!)).toMatchObject({ rows });
  });
});
