// Static bearer tokens and anonymous access on real HTTP sockets: a configured token lets its holder
// in as a `token` principal with its scopes; a wrong token, one differing only in case or length, a
// missing, empty or malformed Authorization header, or a token in the URL are refused with the
// RFC 6750 status and challenge; anonymous mode admits callers without credentials but never turns
// a bad token into anonymous access. Also pins hashToken/generateToken and option validation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/core/errors.js';
import { z } from 'zod';
import { authOptions, createAuthenticator, generateToken, hashToken } from '../../src/http/auth.js';
import { startAuthServer, type AuthServer } from './auth-harness.js';

const ALICE = 'alice-0123456789-abcdefghijklmnopqrstuvwxyz';
const BOB = generateToken();

let server: AuthServer;

beforeAll(async () => {
  server = await startAuthServer();
});
afterAll(() => server.close());

function get(headers: Record<string, string> = {}, path = '/mcp'): Promise<Response> {
  return fetch(`${server.origin}${path}`, { headers });
}

describe('static bearer tokens', () => {
  beforeAll(() => {
    server.use(
      createAuthenticator({
        tokens: [
          { name: 'alice', sha256: hashToken(ALICE), scopes: ['files:read', 'files:write'] },
          { name: 'bob', sha256: BOB.sha256.toUpperCase() },
        ],
      }),
    );
  });

  it('lets a configured token in as a token principal with its scopes', async () => {
    const response = await get({ authorization: `Bearer ${ALICE}` });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      principal: { id: 'alice', kind: 'token', scopes: ['files:read', 'files:write'] },
      clientId: 'alice',
    });
    const bob = await get({ authorization: `Bearer ${BOB.token}` });
    expect(await bob.json()).toMatchObject({ principal: { id: 'bob', kind: 'token', scopes: [] } });
  });

  it('accepts the scheme in any case and more than one space before the token', async () => {
    expect((await get({ authorization: `bearer ${ALICE}` })).status).toBe(200);
    expect((await get({ authorization: `BEARER   ${ALICE}` })).status).toBe(200);
  });

  it.each([
    ['a wrong token', 'not-the-token-0123456789-0123456789-xyz'],
    ['the token in another case', ALICE.toUpperCase()],
    ['the token one character short', ALICE.slice(0, -1)],
    ['the token one character long', `${ALICE}x`],
    ['the digest instead of the token', hashToken(ALICE)],
  ])('refuses %s with 401 invalid_token and never echoes it', async (_what, token) => {
    const response = await get({ authorization: `Bearer ${token}` });
    expect(response.status).toBe(401);
    const challenge = response.headers.get('www-authenticate') ?? '';
    expect(challenge).toBe(
      'Bearer error="invalid_token", error_description="The access token is not valid"',
    );
    const body = await response.text();
    expect(JSON.parse(body)).toEqual({
      error: 'invalid_token',
      error_description: 'The access token is not valid',
    });
    expect(body + challenge).not.toContain(token);
  });

  it('answers a request without credentials with 401, a bare challenge (no error code) and a body that says the token is missing, not invalid', async () => {
    const response = await get();
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="reservoir"');
    const body = (await response.json()) as { error: string; error_description: string };
    expect(body.error).not.toBe('invalid_token');
    expect(body.error_description).toBe(
      'Authentication required: the request carries no access token; send it as Authorization: Bearer <token>',
    );
  });

  it("treats another scheme (a proxy's Basic) as no bearer credentials", async () => {
    const response = await get({ authorization: 'Basic dXNlcjpwYXNz' });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="reservoir"');
  });

  it.each([
    ['Bearer with no token', 'Bearer'],
    ['Bearer with only spaces', 'Bearer    '],
    ['two tokens', `Bearer ${ALICE} ${ALICE}`],
    ['two Authorization values', `Bearer ${ALICE}, Bearer ${ALICE}`],
    ['a token with characters outside b64token', `Bearer ${ALICE}!`],
    ['a quoted token', `Bearer "${ALICE}"`],
  ])('refuses %s as a malformed request (400 invalid_request)', async (_what, header) => {
    const response = await get({ authorization: header });
    expect(response.status).toBe(400);
    expect(response.headers.get('www-authenticate')).toBe(
      'Bearer error="invalid_request", error_description="Malformed Authorization header; expected \'Bearer <token>\'"',
    );
    expect(await response.text()).not.toContain(ALICE);
  });

  it('reads a token glued to the scheme as another scheme: no bearer credentials', async () => {
    const response = await get({ authorization: `Bearer${ALICE}` });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="reservoir"');
  });

  it('refuses a token in the query string, even a valid one, without echoing it', async () => {
    const response = await get({}, `/mcp?access_token=${ALICE}`);
    expect(response.status).toBe(400);
    expect(response.headers.get('www-authenticate')).toContain('error="invalid_request"');
    expect(await response.text()).not.toContain(ALICE);
  });

  it('serves no protected resource metadata without OAuth', async () => {
    expect((await get({}, '/.well-known/oauth-protected-resource')).status).toBe(404);
  });
});

describe('anonymous access', () => {
  beforeAll(() => {
    server.use(
      createAuthenticator({
        anonymous: true,
        tokens: [{ name: 'alice', sha256: hashToken(ALICE), scopes: ['files:read'] }],
      }),
    );
  });

  it('admits a request without credentials as the anonymous principal', async () => {
    const response = await get();
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      principal: { id: 'anonymous', kind: 'anonymous', scopes: [] },
      clientId: null,
      resourceMetadataUrl: null,
    });
  });

  it('still names a token holder', async () => {
    expect(await (await get({ authorization: `Bearer ${ALICE}` })).json()).toMatchObject({
      principal: { id: 'alice', kind: 'token' },
    });
  });

  it('refuses a bad token instead of falling back to anonymous', async () => {
    expect(
      (await get({ authorization: 'Bearer wrong-token-0123456789-0123456789-0123' })).status,
    ).toBe(401);
    expect((await get({ authorization: 'Bearer' })).status).toBe(400);
  });

  it('can be the only mode', async () => {
    const auth = createAuthenticator({ anonymous: true });
    const result = await auth.authenticate(new Request('http://127.0.0.1/mcp'));
    expect(result).toEqual({ principal: { id: 'anonymous', kind: 'anonymous', scopes: [] } });
  });
});

describe('hashToken and generateToken', () => {
  it('hashes with SHA-256 into lowercase hex', () => {
    expect(hashToken('a'.repeat(32))).toBe(
      '3ba3f5f43b92602683c19aee62a20342b084dd5971ddd33808d81a328879a547',
    );
  });

  it('generates distinct 256-bit base64url tokens whose digest matches', () => {
    const a = generateToken();
    const b = generateToken();
    expect(a.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a.token).not.toBe(b.token);
    expect(hashToken(a.token)).toBe(a.sha256);
  });

  it('refuses tokens that are short or could not be sent in a header', () => {
    expect(() => hashToken('short')).toThrow(ConfigError);
    expect(() => hashToken('short')).toThrow(/at least 32 characters/);
    expect(() => hashToken(`${'a'.repeat(32)} b`)).toThrow(/expected letters, digits/);
  });
});

describe('option validation', () => {
  const digest = 'ab'.repeat(32);

  it.each([
    [{}, 'auth', /nobody could ever be let in/],
    [{ tokens: [{ name: 'a', sha256: 'abc' }] }, 'auth.tokens[0].sha256', /64 hex digits/],
    [{ tokens: [{ name: '', sha256: digest }] }, 'auth.tokens[0].name', /./],
    [
      {
        tokens: [
          { name: 'a', sha256: digest },
          { name: 'a', sha256: 'cd'.repeat(32) },
        ],
      },
      'auth.tokens[1].name',
      /duplicate token name 'a'/,
    ],
    [
      {
        tokens: [
          { name: 'a', sha256: digest },
          { name: 'b', sha256: digest.toUpperCase() },
        ],
      },
      'auth.tokens[1].sha256',
      /same token as tokens\[0\]/,
    ],
    [
      { tokens: [{ name: 'a', sha256: digest, scopes: ['has space'] }] },
      'auth.tokens[0].scopes[0]',
      /expected a scope/,
    ],
    [{ tokens: [{ name: 'a', sha256: digest, token: 'plain' }] }, 'auth.tokens[0]', /token/],
    [
      { oauth: { issuer: 'http://as.example.com', audience: 'https://mcp.example.com/mcp' } },
      'auth.oauth.issuer',
      /expected https/,
    ],
    [
      { oauth: { issuer: 'https://as.example.com?x=1', audience: 'https://mcp.example.com/mcp' } },
      'auth.oauth.issuer',
      /no query/,
    ],
    [
      { oauth: { issuer: 'https://as.example.com', audience: 'mcp.example.com' } },
      'auth.oauth.audience',
      /absolute URL/,
    ],
    [
      { oauth: { issuer: 'https://as.example.com', audience: 'https://mcp.example.com/mcp#x' } },
      'auth.oauth.audience',
      /no fragment/,
    ],
    [{ oauth: { issuer: 'https://as.example.com' } }, 'auth.oauth.audience', /./],
    [
      {
        oauth: {
          issuer: 'https://as.example.com',
          audience: 'https://mcp.example.com',
          algorithms: ['HS256'],
        },
      },
      'auth.oauth.algorithms[0]',
      /./,
    ],
    [
      {
        oauth: {
          issuer: 'https://as.example.com',
          audience: 'https://mcp.example.com',
          algorithms: ['none'],
        },
      },
      'auth.oauth.algorithms[0]',
      /./,
    ],
    [
      {
        oauth: {
          issuer: 'https://as.example.com',
          audience: 'https://mcp.example.com',
          jwksUri: 'http://keys.example.com/jwks',
        },
      },
      'auth.oauth.jwksUri',
      /expected https/,
    ],
  ])('refuses %j with a ConfigError naming %s', (options, field, message) => {
    let thrown: unknown;
    try {
      createAuthenticator(options as never);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).data['field']).toBe(field);
    expect((thrown as ConfigError).message).toMatch(message);
  });

  it('converts to JSON Schema for the config file (defaults optional on input)', () => {
    const schema = z.toJSONSchema(authOptions, { target: 'draft-2020-12', io: 'input' }) as {
      properties: Record<string, unknown>;
      required?: string[];
    };
    expect(Object.keys(schema.properties)).toEqual(['anonymous', 'tokens', 'oauth']);
    expect(schema.required ?? []).toEqual([]);
  });
});
