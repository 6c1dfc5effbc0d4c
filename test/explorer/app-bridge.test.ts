// The explorer inside a host that renders MCP Apps, in Chromium: the host reads the ui:// page from
// Reservoir through the SDK client, renders it in a sandboxed frame, and forwards the page's App
// bridge calls to Reservoir through that client. The page browses and previews through the bridge
// (no HTTP of its own) and hands the resource the user adds back as a resource_link.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPLORER_APP_URI } from '../../src/mcp/explorer-app.js';
import { CLIENT_INFO, MODERN_VERSION } from '../helpers/clients.js';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import {
  HAS_CHROMIUM,
  launchBrowser,
  startExplorer,
  type BrowserHandle,
  type Explorer,
} from './harness.js';

let dir: string;
let root: string;
let explorer: Explorer;
let browser: BrowserHandle;
let client: Client;
let host: Server;
let hostOrigin: string;
let bundleDir: string;

beforeAll(async () => {
  if (!HAS_CHROMIUM) return;
  dir = makeTempDir('reservoir-explorer-');
  root = join(dir, 'served');
  writeTree(root, { 'guides/intro.md': '# Intro inside the host\n', 'data.json': '{"ok":true}' });
  explorer = await startExplorer({ root });
  client = new Client(CLIENT_INFO, {
    capabilities: {
      extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } },
    },
    versionNegotiation: { mode: { pin: MODERN_VERSION } },
  } as never);
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', explorer.origin)));
  bundleDir = mkdtempSync(join(tmpdir(), 'reservoir-host-'));
  await build({
    entryPoints: [join(import.meta.dirname, 'fixtures/host.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    outfile: join(bundleDir, 'host.js'),
    logLevel: 'silent',
  });
  const script = readFileSync(join(bundleDir, 'host.js'));
  host = createServer((req, res) => {
    if (req.url === '/host.js')
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
    else
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end('<!doctype html><title>host</title><script type="module" src="/host.js"></script>');
  });
  await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
  hostOrigin = `http://127.0.0.1:${(host.address() as { port: number }).port}`;
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await client?.close();
  await new Promise((resolve) => host?.close(resolve));
  await explorer?.close();
  if (bundleDir !== undefined) rmSync(bundleDir, { recursive: true, force: true });
  removeTree(dir);
});

describe.skipIf(!HAS_CHROMIUM)('the explorer as an MCP App', () => {
  it('browses and previews through the host bridge and hands a picked resource back as a resource_link', async () => {
    const { contents } = await client.readResource({ uri: EXPLORER_APP_URI });
    const html = (contents[0] as { text: string }).text;
    const page = await browser.browser.newPage();
    const toServer: string[] = [];
    const context: unknown[] = [];
    await page.exposeFunction(
      'hostForward',
      async (method: string, params: Record<string, unknown>) => {
        toServer.push(method);
        return client.request({ method, params } as never);
      },
    );
    await page.exposeFunction('hostContext', async (params: unknown) => void context.push(params));
    const explorerRequests: string[] = [];
    page.on('request', (request) => {
      if (request.url().startsWith(explorer.origin)) explorerRequests.push(request.url());
    });
    await page.goto(`${hostOrigin}/`);
    type Host = {
      startApp?(html: string): Promise<void>;
      sendToolInput?(args: object): Promise<void>;
    };
    await page.waitForFunction(() => typeof (window as Host).startApp === 'function');
    await page.evaluate((text) => (window as Host).startApp!(text), html);
    const app = page.frameLocator('iframe');
    const intro = app.locator(`[data-uri="file://${root}/guides/intro.md"]`);
    await intro.waitFor();
    await intro.click();
    await app.locator('.markdown h1', { hasText: 'Intro inside the host' }).waitFor();
    await app.locator('button.pick').click();
    await expect.poll(() => context.length).toBe(1);
    expect(context[0]).toEqual({
      content: [
        {
          type: 'resource_link',
          uri: `file://${root}/guides/intro.md`,
          name: 'intro.md',
          title: 'guides/intro.md',
          mimeType: 'text/markdown',
          size: 24,
        },
      ],
    });
    expect(toServer).toContain('resources/list');
    expect(toServer).toContain('resources/read');
    // The host relays open_explorer's `under`: the page opens that directory's listing.
    await page.evaluate(
      (under) => (window as Host).sendToolInput!({ under }),
      `file://${root}/guides/`,
    );
    await app.locator('.listing button', { hasText: 'intro.md' }).waitFor();
    // The page inside the host made no request of its own to the server: everything went through the bridge.
    expect(explorerRequests).toEqual([]);
    await page.close();
  });
});
