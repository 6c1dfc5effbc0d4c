// who_am_i through the real SDK client over HTTP in both eras: a token principal gets its id, kind,
// scopes and only the access rules that apply to it (never another principal's, never a token);
// a rule shared with others names only the caller (not the other principals it lists, nor scopes
// the caller does not hold); without rules in force it says everything served is visible.
import { join } from 'node:path';
import { StreamableHTTPClientTransport, type Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessPolicy } from '../../src/core/access.js';
import { createAuthenticator } from '../../src/http/auth.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { whoAmITool } from '../../src/tools/index.js';
import { ERAS, newClient } from '../helpers/clients.js';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { makeToken } from '../security/harness.js';

const alice = makeToken('alice', ['team']);
const bob = makeToken('bob', []);
let dir: string;
let reservoir: Reservoir;
let url: string;

beforeAll(async () => {
  dir = makeTempDir('reservoir-whoami-');
  writeTree(dir, { 'docs/a.md': '# a\n' });
  const root = `file://${join(dir, 'docs')}/`;
  reservoir = createReservoir({
    providers: [filesProvider({ root: join(dir, 'docs') })],
    tools: [],
    access: new AccessPolicy({
      default: 'deny',
      rules: [
        { scopes: ['team'], allow: [`${root}**`, 'tool:*'] },
        { principals: ['token:bob'], allow: ['tool:who_am_i'], deny: [`${root}**`] },
        {
          principals: ['token:carol-the-auditor', 'token:alice'],
          scopes: ['secret-ops'],
          allow: ['prompt:*'],
        },
        { principals: ['token:dave-the-admin'], scopes: ['team', 'root-ops'], allow: ['prompt:x'] },
      ],
    }),
  });
  reservoir.tools.add(whoAmITool(reservoir.registry));
  const auth = createAuthenticator({
    tokens: [alice, bob].map(({ name, sha256, scopes }) => ({ name, sha256, scopes })),
  });
  url = (await reservoir.listen({ port: 0, auth })).url;
});
afterAll(async () => {
  await reservoir.close();
  removeTree(dir);
});

async function connectAs(era: (typeof ERAS)[number], token: string): Promise<Client> {
  const client = newClient(era);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

describe.each(ERAS)('who_am_i in the %s era', (era) => {
  it('names the token principal, its scopes and exactly the rules that apply to it', async () => {
    const client = await connectAs(era, alice.token);
    const result = await client.callTool({ name: 'who_am_i', arguments: {} });
    expect(result.structuredContent).toEqual({
      principal: { id: 'alice', kind: 'token', scopes: ['team'] },
      access: {
        default: 'deny',
        rules: [
          { scopes: ['team'], allow: [`file://${join(dir, 'docs')}/**`, 'tool:*'] },
          { principals: ['token:alice'], scopes: [], allow: ['prompt:*'] },
          { principals: [], scopes: ['team'], allow: ['prompt:x'] },
        ],
      },
    });
    const text = JSON.stringify(result);
    expect(text).not.toContain(alice.token);
    for (const other of ['bob', 'carol', 'dave', 'secret-ops', 'root-ops'])
      expect(text).not.toContain(other);
    await client.close();
  });

  it('refuses arguments it does not take, naming them', async () => {
    const client = await connectAs(era, bob.token);
    // An input validation failure is a tool result the model can read (isError), naming the argument.
    const refused = await client.callTool({ name: 'who_am_i', arguments: { id: 'alice' } });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toMatch(/'id'/);
    const mine = await client.callTool({ name: 'who_am_i', arguments: {} });
    expect((mine.structuredContent as { principal: { id: string } }).principal.id).toBe('bob');
    await client.close();
  });
});

describe('who_am_i without rules', () => {
  it('says no rules are in force for an anonymous caller on loopback', async () => {
    const local = createReservoir({});
    local.tools.add(whoAmITool(local.registry));
    const endpoint = await local.listen({ port: 0 });
    const client = newClient('2026');
    await client.connect(new StreamableHTTPClientTransport(new URL(endpoint.url)));
    const result = await client.callTool({ name: 'who_am_i', arguments: {} });
    expect(result.structuredContent).toEqual({
      principal: { id: 'anonymous', kind: 'anonymous', scopes: [] },
    });
    expect((result.content as { text: string }[])[0]?.text).toContain(
      'No access rules are in force',
    );
    await client.close();
    await local.close();
  });
});
