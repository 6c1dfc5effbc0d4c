// The real SDK client, in both protocol eras, through the authenticator in front of the SDK's own
// createMcpHandler: a bearer token in `requestInit` reaches tool handlers as the principal in
// `ctx.http.authInfo`, and a client without one, or with a bad one, cannot connect.
import { StreamableHTTPClientTransport, type Client } from '@modelcontextprotocol/client';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthenticator, generateToken } from '../../src/http/auth.js';
import { newClient, type Era } from '../helpers/clients.js';
import {
  now,
  startAuthorizationServer,
  startAuthServer,
  type AuthorizationServer,
  type AuthServer,
} from './auth-harness.js';

const CI = generateToken();
let server: AuthServer;
let as: AuthorizationServer;

beforeAll(async () => {
  [server, as] = await Promise.all([startAuthServer(), startAuthorizationServer()]);
  server.use(
    createAuthenticator({
      tokens: [{ name: 'ci', sha256: CI.sha256, scopes: ['files:read'] }],
      oauth: { issuer: as.issuer, jwksUri: as.jwksUri, audience: server.url },
    }),
  );
  const handler = createMcpHandler(() => {
    const mcp = new McpServer({ name: 'auth-test', version: '1' });
    mcp.registerTool('whoami', { description: 'The caller' }, (ctx) => ({
      content: [
        { type: 'text', text: JSON.stringify(ctx.http?.authInfo?.extra?.['principal'] ?? null) },
      ],
    }));
    return mcp;
  });
  server.handle((request, auth) =>
    handler.fetch(request, auth.authInfo === undefined ? undefined : { authInfo: auth.authInfo }),
  );
});
afterAll(async () => {
  await Promise.all([server.close(), as.close()]);
});

async function connect(era: Era, token?: string): Promise<Client> {
  const client = newClient(era);
  const requestInit =
    token === undefined ? undefined : { headers: { Authorization: `Bearer ${token}` } };
  await client.connect(
    new StreamableHTTPClientTransport(
      new URL(server.url),
      requestInit === undefined ? {} : { requestInit },
    ),
  );
  return client;
}

async function whoami(client: Client): Promise<unknown> {
  const result = await client.callTool({ name: 'whoami', arguments: {} });
  const [first] = result.content as { type: string; text: string }[];
  return JSON.parse(first?.text ?? 'null');
}

describe.each(['2025', '2026'] as const)('the SDK client (%s era)', (era) => {
  it('reaches handlers as the static token holder', async () => {
    const client = await connect(era, CI.token);
    try {
      expect(await whoami(client)).toEqual({ id: 'ci', kind: 'token', scopes: ['files:read'] });
    } finally {
      await client.close();
    }
  });

  it('reaches handlers as the OAuth subject', async () => {
    const token = await as.sign({
      iss: as.issuer,
      aud: server.url,
      sub: 'user-7',
      exp: now() + 300,
      scope: 'mcp',
    });
    const client = await connect(era, token);
    try {
      expect(await whoami(client)).toEqual({ id: 'user-7', kind: 'oauth', scopes: ['mcp'] });
    } finally {
      await client.close();
    }
  });

  it('cannot connect without a token or with a bad one', async () => {
    await expect(connect(era)).rejects.toThrow(
      era === '2025' ? /Authentication required/ : /HTTP 401/,
    );
    await expect(connect(era, 'wrong-token-0123456789-0123456789-0123')).rejects.toThrow(
      era === '2025' ? /The access token is not valid/ : /HTTP 401/,
    );
  });
});
