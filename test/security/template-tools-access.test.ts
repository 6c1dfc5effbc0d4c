// Tools made from templates under access rules, over HTTP with two tokens: a template tool reads
// only what resources/read would give the same caller (alice cannot reach private/ through
// read_file, nor with `..` in the path, and is told what read_resource tells her), while bob,
// whose rules allow it, reads it; with rules in force no completion values go into the schemas.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessPolicy } from '../../src/core/access.js';
import { createAuthenticator, generateToken } from '../../src/http/auth.js';
import { sdkTemplateEngine } from '../../src/mcp/templates.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { builtinTools } from '../../src/tools/index.js';
import { templateTools } from '../../src/tools/template-tools.js';
import { tempDir } from '../providers/helpers.js';
import { closeClient, connectWithToken } from './harness.js';

const ALICE = generateToken();
const BOB = generateToken();
let root: string;
let base: string;
let reservoir: Reservoir;
let alice: Client;
let bob: Client;

beforeAll(async () => {
  root = tempDir('reservoir-template-access-');
  mkdirSync(join(root, 'docs'));
  mkdirSync(join(root, 'private'));
  writeFileSync(join(root, 'docs', 'guide.md'), '# Guide\n');
  writeFileSync(join(root, 'private', 'secret.txt'), 'the secret\n');
  base = pathToFileURL(root).href + '/';
  reservoir = createReservoir({
    providers: [filesProvider({ root })],
    access: new AccessPolicy({
      rules: [
        { principals: ['token:alice'], allow: [`${base}docs/**`, 'tool:*'] },
        { principals: ['token:bob'], allow: [`${base}**`, 'tool:*'] },
      ],
    }),
  });
  for (const tool of builtinTools(reservoir.registry)) reservoir.tools.add(tool);
  for (const tool of await templateTools(reservoir.registry, sdkTemplateEngine, {
    taken: reservoir.tools.all().map((t) => t.name),
  }))
    reservoir.tools.add(tool);
  const endpoint = await reservoir.listen({
    port: 0,
    auth: createAuthenticator({
      tokens: [
        { name: 'alice', sha256: ALICE.sha256 },
        { name: 'bob', sha256: BOB.sha256 },
      ],
    }),
  });
  alice = await connectWithToken('2025', endpoint.url, ALICE.token);
  bob = await connectWithToken('2025', endpoint.url, BOB.token);
});

afterAll(async () => {
  await closeClient(alice);
  await closeClient(bob);
  await reservoir?.close();
  rmSync(root, { recursive: true, force: true });
});

function text(result: Awaited<ReturnType<Client['callTool']>>): string {
  return (result.content as Array<{ type: string; text?: string; resource?: { text?: string } }>)
    .map((block) => block.text ?? block.resource?.text ?? '')
    .join('\n');
}

describe('a template tool under access rules', () => {
  it('reads what the caller may read, and refuses the rest as read_resource does', async () => {
    const guide = await alice.callTool({ name: 'read_file', arguments: { path: 'docs/guide.md' } });
    expect(text(guide)).toContain('# Guide');
    const denied = await alice.callTool({
      name: 'read_file',
      arguments: { path: 'private/secret.txt' },
    });
    const byUri = await alice.callTool({
      name: 'read_resource',
      arguments: { uri: `${base}private/secret.txt` },
    });
    expect(denied.isError).toBe(true);
    expect(denied.content).toEqual(byUri.content);
    expect(text(denied)).not.toContain('the secret');
    for (const path of ['docs/../private/secret.txt', 'docs/%2e%2e/private/secret.txt']) {
      const sneaky = await alice.callTool({ name: 'read_file', arguments: { path } });
      expect(sneaky.isError).toBe(true);
      expect(text(sneaky)).not.toContain('the secret');
    }
    const allowed = await bob.callTool({
      name: 'read_file',
      arguments: { path: 'private/secret.txt' },
    });
    expect(text(allowed)).toContain('the secret');
  });

  it('names no completion values in its schema while rules are in force', async () => {
    const { tools } = await alice.listTools();
    const tool = tools.find((t) => t.name === 'read_file');
    expect(JSON.stringify(tool?.inputSchema)).not.toContain('private');
    expect(JSON.stringify(tool?.inputSchema)).not.toContain('"enum"');
  });
});
