// `mcp-remote --transport sse-only`, the stdio bridge old desktop hosts use, reaches Reservoir over
// the 2024-11-05 HTTP+SSE transport with a bearer token: driven over its stdio by the SDK client, it
// lists and reads under the token's access rules, and calls a tool. A wrong token is refused.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessPolicy } from '../../src/core/access.js';
import { createAuthenticator, generateToken } from '../../src/http/auth.js';
import type { HttpEndpoint } from '../../src/http/app.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { builtinTools } from '../../src/tools/index.js';
import { Cleanup, CLIENT_INFO } from '../helpers/clients.js';

const require = createRequire(import.meta.url);
const PROXY = join(dirname(require.resolve('mcp-remote/package.json')), 'dist', 'proxy.js');
const ALICE = generateToken();
const cleanup = new Cleanup();

let root: string;
let base: string;
let configDir: string;
let reservoir: Reservoir;
let endpoint: HttpEndpoint;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'reservoir-mcp-remote-'));
  configDir = mkdtempSync(join(tmpdir(), 'reservoir-mcp-remote-config-'));
  mkdirSync(join(root, 'docs'));
  mkdirSync(join(root, 'private'));
  writeFileSync(join(root, 'docs', 'guide.md'), '# Guide\n\nThrough mcp-remote.\n');
  writeFileSync(join(root, 'private', 'secret.txt'), 'hidden\n');
  base = pathToFileURL(root).href + '/';
  reservoir = createReservoir({
    providers: [filesProvider({ root })],
    access: new AccessPolicy({
      rules: [{ principals: ['token:alice'], allow: [`${base}docs/**`, 'tool:*'] }],
    }),
  });
  for (const tool of builtinTools(reservoir.registry)) reservoir.tools.add(tool);
  endpoint = await reservoir.listen({
    port: 0,
    auth: createAuthenticator({ tokens: [{ name: 'alice', sha256: ALICE.sha256 }] }),
  });
});

afterAll(async () => {
  await cleanup.run();
  await reservoir?.close();
  rmSync(root, { recursive: true, force: true });
  rmSync(configDir, { recursive: true, force: true });
});

/** mcp-remote as a host runs it: a child process on stdio, told the SSE URL and the token header. */
function bridge(token: string): { client: Client; transport: StdioClientTransport } {
  const sse = new URL('/sse', endpoint.url).href;
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      PROXY,
      sse,
      '--transport',
      'sse-only',
      '--allow-http',
      '--header',
      `Authorization: Bearer ${token}`,
    ],
    env: { ...(process.env as Record<string, string>), MCP_REMOTE_CONFIG_DIR: configDir },
    stderr: 'pipe',
  });
  const client = new Client(CLIENT_INFO);
  cleanup.add(() => client.close());
  return { client, transport };
}

describe('mcp-remote --transport sse-only', () => {
  it('lists, reads and calls tools through the HTTP+SSE transport with a token, under its access rules', async () => {
    const { client, transport } = bridge(ALICE.token);
    await client.connect(transport);
    const listed = await client.listResources();
    const uris = listed.resources.map((r) => r.uri);
    expect(uris).toContain(`${base}docs/guide.md`);
    expect(uris.some((uri) => uri.includes('/private/'))).toBe(false);
    const read = await client.readResource({ uri: `${base}docs/guide.md` });
    expect(read.contents[0]).toMatchObject({ text: '# Guide\n\nThrough mcp-remote.\n' });
    await expect(client.readResource({ uri: `${base}private/secret.txt` })).rejects.toThrow();
    const called = await client.callTool({
      name: 'read_resource',
      arguments: { uri: `${base}docs/guide.md` },
    });
    expect(JSON.stringify(called.content)).toContain('Through mcp-remote.');
    await client.close();
  });

  it('cannot connect with a wrong token', async () => {
    const { client, transport } = bridge('not-the-token-0123456789-0123456789-xyz');
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    await expect(client.connect(transport)).rejects.toThrow();
    expect(stderr).toMatch(/401|Unauthorized|invalid_token/i);
  });
});
