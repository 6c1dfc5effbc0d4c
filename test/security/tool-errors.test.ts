// Issue 11, item 2: a built-in tool's error message names only the served roots its caller may
// reach. A token allowed one root of two gets messages naming that root and never the other; a
// token allowed neither gets messages naming none; and searching under the hidden root answers
// exactly as under a root nobody serves. Through the real SDK client over HTTP, both eras.
import { randomBytes } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessPolicy } from '../../src/core/access.js';
import { createAuthenticator } from '../../src/http/auth.js';
import type { HttpEndpoint } from '../../src/http/app.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { builtinTools } from '../../src/tools/index.js';
import { ERAS, type Era } from '../helpers/clients.js';
import { dirUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { closeClient, connectWithToken, makeToken } from './harness.js';

const HIDDEN = `hidden-${randomBytes(4).toString('hex')}`;
const docs = makeToken('docs-bot', ['docs']);
const nobody = makeToken('nobody', ['tools-only']);
let publicRoot: string;
let hiddenRoot: string;
let publicBase: string;
let hiddenBase: string;
let reservoir: Reservoir;
let endpoint: HttpEndpoint;

beforeAll(async () => {
  publicRoot = makeTempDir('reservoir-public-');
  hiddenRoot = makeTempDir(`reservoir-${HIDDEN}-`);
  writeTree(publicRoot, { 'guide.md': 'Public.\n' });
  writeTree(hiddenRoot, { 'plan.md': 'Hidden.\n' });
  publicBase = dirUri(publicRoot);
  hiddenBase = dirUri(hiddenRoot);
  reservoir = createReservoir({
    providers: [filesProvider({ root: publicRoot }), filesProvider({ root: hiddenRoot })],
    access: new AccessPolicy({
      rules: [
        { scopes: ['docs'], allow: [`${publicBase}**`, 'tool:*'] },
        { scopes: ['tools-only'], allow: ['tool:*'] },
      ],
    }),
  });
  for (const tool of builtinTools(reservoir.registry)) reservoir.tools.add(tool);
  endpoint = await reservoir.listen({
    host: '127.0.0.1',
    port: 0,
    auth: createAuthenticator({
      tokens: [docs, nobody].map(({ name, sha256, scopes }) => ({ name, sha256, scopes })),
    }),
  });
});

afterAll(async () => {
  await reservoir?.close();
  removeTree(publicRoot);
  removeTree(hiddenRoot);
});

function textOf(result: { content?: unknown }): string {
  return ((result.content ?? []) as { type: string; text?: string }[])
    .map((c) => c.text ?? '')
    .join('\n');
}

describe.each(ERAS)('tool error messages (%s era)', (era: Era) => {
  let docsClient: Client;
  let nobodyClient: Client;
  beforeAll(async () => {
    docsClient = await connectWithToken(era, endpoint.url, docs.token);
    nobodyClient = await connectWithToken(era, endpoint.url, nobody.token);
  });
  afterAll(async () => {
    await closeClient(docsClient);
    await closeClient(nobodyClient);
  });

  it('names only the root the caller may reach when read_resource is given an invalid URI', async () => {
    const result = await docsClient.callTool({
      name: 'read_resource',
      arguments: { uri: 'relative/path.md' },
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain(`served roots: ${publicBase}`);
    expect(textOf(result)).not.toContain(HIDDEN);
  });

  it('names no root at all to a caller who may reach none', async () => {
    const result = await nobodyClient.callTool({
      name: 'read_resource',
      arguments: { uri: 'relative/path.md' },
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).not.toContain('served roots');
    expect(textOf(result)).not.toContain(HIDDEN);
    expect(textOf(result)).not.toContain(publicBase);
    const find = await nobodyClient.callTool({
      name: 'find_resources',
      arguments: { under: 'nope' },
    });
    expect(textOf(find)).not.toContain(HIDDEN);
    expect(textOf(find)).not.toContain(publicBase);
  });

  it('answers find_resources under the hidden root exactly as under a root nobody serves', async () => {
    const hidden = await docsClient.callTool({
      name: 'find_resources',
      arguments: { under: hiddenBase },
    });
    const unserved = await docsClient.callTool({
      name: 'find_resources',
      arguments: { under: 'file:///no/such/root/' },
    });
    expect(hidden.structuredContent).toEqual(unserved.structuredContent);
    expect(textOf(hidden).replace(hiddenBase, '<under>')).toBe(
      textOf(unserved).replace('file:///no/such/root/', '<under>'),
    );
    expect(textOf(hidden).replaceAll(hiddenBase, '')).not.toContain(HIDDEN);
    expect(textOf(unserved)).toContain(`served roots: ${publicBase}`);
    // The root the caller may reach is still searched.
    const shown = await docsClient.callTool({
      name: 'find_resources',
      arguments: { under: publicBase },
    });
    expect(
      (shown.structuredContent as { resources: { uri: string }[] }).resources.map((r) => r.uri),
    ).toEqual([`${publicBase}guide.md`]);
  });

  it('names only the reachable root when find_resources is given an invalid under', async () => {
    const result = await docsClient.callTool({
      name: 'find_resources',
      arguments: { under: 'not a uri' },
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain(publicBase);
    expect(textOf(result)).not.toContain(HIDDEN);
  });
});
