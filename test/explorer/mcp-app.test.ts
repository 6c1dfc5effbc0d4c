// The explorer as an MCP App, through the real SDK client in both eras on both transports: a host
// declaring the `io.modelcontextprotocol/ui` extension is offered `open_explorer` (pointing at
// ui://reservoir/explorer.html) and can read that page — the explorer bundle inlined, with its App
// bridge mode on; a host without the extension sees no new tool, cannot call it, and reads the URI
// as a missing resource. Also: the server, tools, prompts and templates carry data: URI icons, and
// who_am_i answers through the SDK client.
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPLORER_APP_URI, OPEN_EXPLORER } from '../../src/mcp/explorer-app.js';
import { CLI_PATH, ensureBuilt } from '../helpers/build.js';
import {
  CLIENT_INFO,
  Cleanup,
  MODERN_VERSION,
  TARGETS,
  label,
  spawnHttpServer,
  type Target,
} from '../helpers/clients.js';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';

const APP_MIME = 'text/html;profile=mcp-app';
const EXTENSION = { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: [APP_MIME] } } };

let dir: string;
let httpUrl: string;
const cleanup = new Cleanup();

beforeAll(async () => {
  await ensureBuilt();
  dir = makeTempDir('reservoir-explorer-');
  writeTree(dir, { 'docs/a.md': '# a\n' });
  httpUrl = (await spawnHttpServer([join(dir, 'docs')], [], cleanup)).url;
});
afterAll(async () => {
  await cleanup.run();
  removeTree(dir);
});

async function connect(target: Target, withExtension: boolean): Promise<Client> {
  const capabilities = withExtension ? EXTENSION : {};
  const client =
    target.era === '2025'
      ? new Client(CLIENT_INFO, { capabilities } as never)
      : new Client(CLIENT_INFO, {
          capabilities,
          versionNegotiation: { mode: { pin: MODERN_VERSION } },
        } as never);
  const transport =
    target.transport === 'stdio'
      ? new StdioClientTransport({
          command: process.execPath,
          args: [CLI_PATH, 'serve', join(dir, 'docs'), '--log-level', 'warn'],
          stderr: 'pipe',
        })
      : new StreamableHTTPClientTransport(new URL(httpUrl));
  cleanup.add(() => client.close());
  await client.connect(transport);
  return client;
}

describe.each(TARGETS)('the MCP App over $transport, $era era', (target) => {
  it(`offers open_explorer and its ui:// page to a host with the extension (${label(target)})`, async () => {
    const client = await connect(target, true);
    const tools = (await client.listTools()).tools;
    const tool = tools.find((t) => t.name === OPEN_EXPLORER);
    expect(tool).toBeDefined();
    expect(tool?._meta).toMatchObject({
      ui: { resourceUri: EXPLORER_APP_URI },
      'ui/resourceUri': EXPLORER_APP_URI,
    });
    expect(tool?.icons?.[0]?.src).toMatch(/^data:image\/svg\+xml;base64,/);
    const result = await client.callTool({ name: OPEN_EXPLORER, arguments: {} });
    expect(result.isError).not.toBe(true);
    expect(result.structuredContent).toEqual({ resourceUri: EXPLORER_APP_URI });
    const read = await client.readResource({ uri: EXPLORER_APP_URI });
    const page = read.contents[0] as { uri: string; mimeType: string; text: string };
    expect(page.uri).toBe(EXPLORER_APP_URI);
    expect(page.mimeType).toBe(APP_MIME);
    expect(page.text).toContain('<meta name="reservoir-mode" content="app">');
    expect(page.text).toMatch(/<script type="module">[\s\S]+<\/script><\/body>/);
    // The inlined script cannot end its element early, and the page names no other host to load from.
    const script = page.text.slice(
      page.text.indexOf('<script type="module">') + 22,
      page.text.lastIndexOf('</script>'),
    );
    expect(script.toLowerCase()).not.toContain('</script');
    expect(page.text).not.toMatch(/<(script|link|img)[^>]+(src|href)=["']?https?:/i);
  });

  it(`offers nothing new to a host without the extension (${label(target)})`, async () => {
    const client = await connect(target, false);
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain(OPEN_EXPLORER);
    await expect(client.callTool({ name: OPEN_EXPLORER, arguments: {} })).rejects.toThrow(
      /unknown tool 'open_explorer'/,
    );
    // Answered exactly as any unknown URI (the wire code per era is pinned by test/e2e/not-found-wire.test.ts).
    await expect(client.readResource({ uri: EXPLORER_APP_URI })).rejects.toThrow(
      `Resource not found: ${EXPLORER_APP_URI}`,
    );
    const listed = await client.request({ method: 'resources/list', params: {} });
    expect(listed.resources.map((r) => r.uri)).not.toContain(EXPLORER_APP_URI);
  });

  it(`gives the server, tools and templates data: URI icons, light and dark (${label(target)})`, async () => {
    const client = await connect(target, false);
    const icons = client.getServerVersion()?.icons ?? [];
    expect(icons.map((i) => i.theme)).toEqual(['light', 'dark']);
    for (const icon of icons) expect(icon.src).toMatch(/^data:image\/svg\+xml;base64,/);
    for (const tool of (await client.listTools()).tools)
      expect(tool.icons?.length, tool.name).toBe(2);
    for (const template of (await client.listResourceTemplates()).resourceTemplates)
      expect(template.icons?.[0]?.src, template.uriTemplate).toMatch(/^data:/);
  });
});
