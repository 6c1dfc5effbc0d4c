// resource_link content blocks exist from revision 2025-06-18 on. A client that negotiated an earlier
// revision (2025-03-26) gets search_resources, list_resources and find_resources results without them
// (the hits are still in the text and structuredContent); a client on 2025-06-18, 2025-11-25 or
// 2026-07-28 gets one per resource. Through the real SDK client over stdio and HTTP.
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import {
  Client,
  StreamableHTTPClientTransport,
  type CallToolResult,
} from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_PATH, ensureBuilt } from '../helpers/build.js';
import { Cleanup, CLIENT_INFO, spawnHttpServer } from '../helpers/clients.js';
import { eventuallyAccepted } from '../helpers/eventually.js';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { textOf } from '../tools/helpers.js';

const cleanup = new Cleanup();
let root: string;
let state: string;
let httpUrl: string;

beforeAll(async () => {
  await ensureBuilt();
  root = makeTempDir('reservoir-links-');
  state = makeTempDir('reservoir-links-state-');
  cleanup.add(() => removeTree(root));
  cleanup.add(() => removeTree(state));
  writeTree(root, {
    'docs/retry.md': 'The retry budget lives here.\n',
    'docs/pool.md': 'Pool sizing.\n',
  });
  httpUrl = (await spawnHttpServer([root], ['--state-dir', state], cleanup)).url;
});

afterAll(() => cleanup.run());

async function connect(transport: 'stdio' | 'http', revision: string): Promise<Client> {
  // A 2025 revision is offered at `initialize` (the first one listed); 2026-07-28 is pinned.
  const client = revision.startsWith('2025-')
    ? new Client(CLIENT_INFO, { supportedProtocolVersions: [revision] })
    : new Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: revision } } });
  const wire =
    transport === 'stdio'
      ? new StdioClientTransport({
          command: process.execPath,
          args: [CLI_PATH, 'serve', root, '--log-level', 'warn', '--state-dir', state],
        })
      : new StreamableHTTPClientTransport(new URL(httpUrl));
  cleanup.add(() => client.close());
  await client.connect(wire);
  return client;
}

/**
 * `search_resources` for "retry budget" once the server's index holds the two files: a server just
 * started answers from what it has indexed so far (`indexing` set), on a loaded machine nothing yet.
 */
async function searchIndexed(client: Client): Promise<CallToolResult> {
  return eventuallyAccepted(
    async () =>
      (await client.callTool({
        name: 'search_resources',
        arguments: { query: 'retry budget' },
      })) as CallToolResult,
    (result) =>
      result.isError === true ||
      (result.structuredContent as { indexing?: unknown } | undefined)?.indexing === undefined,
    'a search answered from the whole index',
    { deadlineMs: 30_000 },
  );
}

const links = (result: CallToolResult): unknown[] =>
  result.content.filter((block) => block.type === 'resource_link');

describe.each(['stdio', 'http'] as const)('resource_link blocks over %s', (transport) => {
  it('a client on revision 2025-03-26 gets search, list and find results without resource_link blocks, the hits still named', async () => {
    const client = await connect(transport, '2025-03-26');
    expect(client.getNegotiatedProtocolVersion()).toBe('2025-03-26');
    const search = await searchIndexed(client);
    expect(search.isError ?? false, textOf(search)).toBe(false);
    expect(textOf(search)).toContain('docs/retry.md');
    expect(links(search)).toEqual([]);
    const listed = (await client.callTool({
      name: 'list_resources',
      arguments: {},
    })) as CallToolResult;
    expect(listed.isError ?? false, textOf(listed)).toBe(false);
    expect(links(listed)).toEqual([]);
    const found = (await client.callTool({
      name: 'find_resources',
      arguments: { name: '*.md' },
    })) as CallToolResult;
    expect(found.isError ?? false, textOf(found)).toBe(false);
    expect(textOf(found)).toContain('retry.md');
    expect(links(found)).toEqual([]);
  });

  it.each(['2025-06-18', '2025-11-25', '2026-07-28'])(
    'a client on revision %s gets one resource_link block per hit and per listed resource',
    async (revision) => {
      const client = await connect(transport, revision);
      const search = await searchIndexed(client);
      expect(search.isError ?? false, textOf(search)).toBe(false);
      expect(links(search)).toEqual([
        expect.objectContaining({ type: 'resource_link', name: 'retry.md' }),
      ]);
      const found = (await client.callTool({
        name: 'find_resources',
        arguments: { name: '*.md' },
      })) as CallToolResult;
      expect(links(found)).toHaveLength(2);
    },
  );
});
