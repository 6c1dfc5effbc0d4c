// Tool `list_changed` on a library-created server: adding a tool to `reservoir.tools` while a 2025
// client is connected sends it `notifications/tools/list_changed`, and its next tools/list shows
// the tool — over stdio on in-memory streams (`serveStdio`) and over HTTP (`listen({ port: 0 })`).
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/client';
import { z } from 'zod';
import { afterEach, beforeAll, afterAll, describe, expect, it } from 'vitest';
import { defineTool } from '../../src/core/tools.js';
import type { Provider } from '../../src/core/types.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { builtinTools } from '../../src/tools/index.js';
import { Cleanup, CLIENT_INFO, connectHttp } from '../helpers/clients.js';
import { StreamClientTransport } from '../helpers/stream-client.js';
import { removeDir, tempDir, writeTree } from '../providers/helpers.js';
import { eventually } from '../helpers/eventually.js';

const waitFor = (check: () => boolean, what: string, timeoutMs = 5_000): Promise<unknown> =>
  eventually(check, what, { deadlineMs: timeoutMs });

const echo = (name: string) =>
  defineTool({
    name,
    description: 'Echoes its text back.',
    input: z.object({ text: z.string() }),
    call: ({ text }) => ({ content: [{ type: 'text', text }] }),
  });

/** Counts the tools/list_changed notifications a client receives. */
function countToolChanges(client: Client): { count: number } {
  const counter = { count: 0 };
  client.setNotificationHandler('notifications/tools/list_changed', () => {
    counter.count += 1;
  });
  return counter;
}

const cleanup = new Cleanup();
let root: string;
let reservoir: Reservoir;

beforeAll(() => {
  root = tempDir();
  writeTree(root, { 'a.md': '# A\n' });
});

afterEach(async () => {
  await cleanup.run();
  await reservoir?.close();
});

afterAll(() => removeDir(root));

describe('tools/list_changed reaches a connected 2025 client', () => {
  it('over stdio on in-memory streams', async () => {
    reservoir = createReservoir({ providers: [filesProvider({ root }) as Provider] });
    for (const tool of builtinTools(reservoir.registry)) reservoir.tools.add(tool);
    const toServer = new PassThrough();
    const toClient = new PassThrough();
    reservoir.serveStdio({ stdin: toServer, stdout: toClient });
    const client = new Client(CLIENT_INFO);
    const changes = countToolChanges(client);
    await client.connect(new StreamClientTransport(toClient, toServer));
    cleanup.add(() => client.close());

    expect((await client.listTools()).tools.map((t) => t.name)).toEqual([
      'find_resources',
      'list_resources',
      'read_resource',
    ]);
    reservoir.tools.add(echo('echo'));
    await waitFor(() => changes.count >= 1, 'notifications/tools/list_changed');
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual([
      'echo',
      'find_resources',
      'list_resources',
      'read_resource',
    ]);
    expect(await client.callTool({ name: 'echo', arguments: { text: 'hi' } })).toMatchObject({
      content: [{ type: 'text', text: 'hi' }],
    });

    reservoir.tools.remove('find_resources');
    await waitFor(() => changes.count >= 2, 'a second notifications/tools/list_changed');
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual([
      'echo',
      'list_resources',
      'read_resource',
    ]);
  });

  it('over Streamable HTTP', async () => {
    reservoir = createReservoir({ providers: [filesProvider({ root }) as Provider] });
    for (const tool of builtinTools(reservoir.registry)) reservoir.tools.add(tool);
    const endpoint = await reservoir.listen({ port: 0 });
    const { client } = await connectHttp('2025', endpoint.url, cleanup);
    const changes = countToolChanges(client);
    expect((await client.listTools()).tools).toHaveLength(3);
    // The client opens its notification stream (GET) on its own schedule; a change sent before it
    // is open has nowhere to go, so keep adding tools until one notification arrives.
    let added = 0;
    await eventually(
      () => {
        if (changes.count > 0) return true;
        reservoir.tools.add(echo(`echo-${added}`));
        added += 1;
        return false;
      },
      'a tools/list_changed once the notification stream is open',
      { deadlineMs: 15_000, stepMs: 100 },
    );
    expect(changes.count).toBeGreaterThanOrEqual(1);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toHaveLength(3 + added);
    expect(names).toContain(`echo-${added - 1}`);
  });
});
