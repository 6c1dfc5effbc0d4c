// Issue 6, item 7: OAuth access tokens through the integrated server (createReservoir → listen with
// an authenticator). A valid JWT reaches the data in both eras; expired, wrong-audience,
// wrong-issuer, badly signed and `alg: none` tokens are 401 invalid_token; a JWK set that cannot be
// fetched fails closed (503, never served) and service recovers once the keys come back.
import { generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthenticator } from '../../src/http/auth.js';
import type { HttpEndpoint } from '../../src/http/app.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { ERAS } from '../helpers/clients.js';
import { dirUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { rawHttp, type RawHttpResponse } from '../helpers/wire.js';
import { now, startAuthorizationServer, type AuthorizationServer } from '../http/auth-harness.js';
import { closeClient, connectWithToken } from './harness.js';

const AUDIENCE = 'https://mcp.example.test/mcp';

let root: string;
let as: AuthorizationServer;
const servers: Reservoir[] = [];

async function start(): Promise<HttpEndpoint> {
  const reservoir = createReservoir({ providers: [filesProvider({ root })] });
  servers.push(reservoir);
  return reservoir.listen({
    host: '127.0.0.1',
    port: 0,
    auth: createAuthenticator({
      oauth: { issuer: as.issuer, jwksUri: as.jwksUri, audience: AUDIENCE },
    }),
  });
}

function claims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    iss: as.issuer,
    aud: AUDIENCE,
    sub: 'user-1',
    exp: now() + 300,
    scope: 'mcp',
    ...overrides,
  };
}

function post(url: string, token: string): Promise<RawHttpResponse> {
  return rawHttp(url, {
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 't', version: '1' },
      },
    }),
  });
}

function unsigned(payload: Record<string, unknown>): string {
  const part = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part(payload)}.`;
}

beforeAll(async () => {
  root = makeTempDir('reservoir-jwt-');
  writeTree(root, { 'a.md': 'alpha\n' });
  as = await startAuthorizationServer();
});

afterAll(async () => {
  await Promise.allSettled(servers.map((s) => s.close()));
  await as?.close();
  removeTree(root);
});

describe('OAuth access tokens on the integrated server', () => {
  let endpoint: HttpEndpoint;
  beforeAll(async () => {
    endpoint = await start();
  });

  it.each(ERAS)('serves a valid JWT (%s era)', async (era) => {
    const client = await connectWithToken(era, endpoint.url, await as.sign(claims()));
    try {
      const list = await client.listResources();
      expect(list.resources.map((r) => r.uri)).toEqual([`${dirUri(root)}a.md`]);
    } finally {
      await closeClient(client);
    }
  });

  it('refuses expired, wrong-audience, wrong-issuer, badly signed and alg:none tokens with 401 invalid_token', async () => {
    const { privateKey: otherKey } = await generateKeyPair('RS256');
    const cases: [string, string][] = [
      ['expired', await as.sign(claims({ exp: now() - 3600 }))],
      ['wrong audience', await as.sign(claims({ aud: 'https://elsewhere.example.test/mcp' }))],
      ['wrong issuer', await as.sign(claims({ iss: 'https://impostor.example.test' }))],
      ['badly signed', await as.sign(claims(), { key: otherKey })],
      ['alg none', unsigned(claims())],
      [
        'tampered payload',
        (await as.sign(claims())).replace(
          /\.([^.]+)\./,
          (_m, payload: string) =>
            `.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), sub: 'admin' })).toString('base64url')}.`,
        ),
      ],
    ];
    for (const [name, token] of cases) {
      const response = await post(endpoint.url, token);
      expect(response.status, name).toBe(401);
      const challenge = String(response.headers['www-authenticate']);
      expect(challenge, name).toMatch(/^Bearer /);
      expect(challenge, name).toContain('error="invalid_token"');
      expect(response.body, name).not.toContain(token);
      expect(challenge, name).not.toContain(token);
    }
    // The SDK client cannot connect with one either.
    await expect(connectWithToken('2026', endpoint.url, unsigned(claims()))).rejects.toThrow();
  });

  it('keeps serving with cached keys while the JWK set is down', async () => {
    await post(endpoint.url, await as.sign(claims())); // keys cached
    as.mode = 'down';
    try {
      const response = await post(endpoint.url, await as.sign(claims({ sub: 'user-2' })));
      expect(response.status).toBe(200);
    } finally {
      as.mode = 'ok';
    }
  });
});

describe('a JWK set that cannot be fetched', () => {
  it('fails closed with 503 Retry-After, refuses bad tokens with 401 meanwhile, and recovers', async () => {
    const endpoint = await start(); // a fresh server: nothing cached
    const token = await as.sign(claims());
    for (const mode of ['down', 'error-500', 'not-json', 'not-a-jwks'] as const) {
      as.mode = mode;
      const before = as.jwksRequests;
      const response = await post(endpoint.url, token);
      expect(response.status, mode).toBe(503);
      expect(response.headers['retry-after'], mode).toBe('5');
      expect(JSON.parse(response.body), mode).toMatchObject({ error: 'temporarily_unavailable' });
      expect(response.headers['mcp-session-id'], mode).toBeUndefined();
      expect(response.body, mode).not.toContain(token);
      // Nothing cached from a failed fetch: each request tries again.
      expect(as.jwksRequests, mode).toBeGreaterThan(before);
      // A token bad on its face needs no key: still 401.
      expect((await post(endpoint.url, unsigned(claims()))).status, mode).toBe(401);
    }
    as.mode = 'ok';
    const recovered = await post(endpoint.url, token);
    expect(recovered.status).toBe(200);
    const client = await connectWithToken('2026', endpoint.url, token);
    try {
      expect((await client.listResources()).resources).toHaveLength(1);
    } finally {
      await closeClient(client);
    }
  });
});
