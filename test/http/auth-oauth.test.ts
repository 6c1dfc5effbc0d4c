// OAuth 2.1 resource-server mode on real HTTP sockets, against a local authorization server with a
// real JWK set: a valid JWT lets its subject in as an `oauth` principal with its scopes; expired,
// not-yet-valid, wrong-audience, wrong-issuer, badly signed, `alg: none` and HS256-with-the-public-
// key tokens are refused with 401 invalid_token and a challenge pointing at the protected resource
// metadata; missing required scopes are 403 insufficient_scope; keys that cannot be fetched (server
// down, garbage) fail closed with 503 and recover when the keys return; the RFC 9728 document is
// served at both well-known paths.
import { generateKeyPair, SignJWT, UnsecuredJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthenticator, type AuthOptions, type Authenticator } from '../../src/http/auth.js';
import {
  now,
  startAuthorizationServer,
  startAuthServer,
  type AuthorizationServer,
  type AuthServer,
} from './auth-harness.js';

let server: AuthServer;
let as: AuthorizationServer;
let prm: string;

beforeAll(async () => {
  [server, as] = await Promise.all([startAuthServer(), startAuthorizationServer()]);
  prm = `${server.origin}/.well-known/oauth-protected-resource/mcp`;
});
afterAll(async () => {
  await Promise.all([server.close(), as.close()]);
});

function oauth(
  extra: Partial<NonNullable<AuthOptions['oauth']>> = {},
  options: Partial<AuthOptions> = {},
): Authenticator {
  return createAuthenticator({
    ...options,
    oauth: { issuer: as.issuer, jwksUri: as.jwksUri, audience: server.url, ...extra },
  });
}

/** Claims of a good token; override any. */
function claims(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    iss: as.issuer,
    aud: server.url,
    sub: 'user-42',
    exp: now() + 300,
    iat: now(),
    scope: 'files:read files:write',
    client_id: 'desktop-app',
    ...extra,
  };
}

function call(token?: string, init: RequestInit = {}): Promise<Response> {
  return fetch(server.url, {
    ...init,
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(init.headers as Record<string, string>),
    },
  });
}

async function expectInvalid(response: Response, description: string): Promise<void> {
  expect(response.status).toBe(401);
  expect(response.headers.get('www-authenticate')).toBe(
    `Bearer resource_metadata="${prm}", error="invalid_token", error_description="${description}"`,
  );
  expect(await response.json()).toEqual({ error: 'invalid_token', error_description: description });
}

describe('JWT access tokens', () => {
  beforeAll(() => server.use(oauth()));

  it('lets a valid token in as an oauth principal named by sub, with the scope claim split', async () => {
    const response = await call(await as.sign(claims()));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      principal: { id: 'user-42', kind: 'oauth', scopes: ['files:read', 'files:write'] },
      clientId: 'desktop-app',
      resourceMetadataUrl: prm,
    });
  });

  it('reads scopes from scp (array) when there is no scope claim, and accepts an audience list', async () => {
    const token = await as.sign(
      claims({ scope: undefined, scp: ['a', 'b'], aud: ['https://other.example', server.url] }),
    );
    expect(await (await call(token)).json()).toMatchObject({
      principal: { id: 'user-42', scopes: ['a', 'b'] },
    });
  });

  it('accepts the audience with a trailing slash', async () => {
    expect((await call(await as.sign(claims({ aud: `${server.url}/` })))).status).toBe(200);
  });

  it('answers a request without a token with 401 and a challenge pointing at the metadata', async () => {
    const response = await call();
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${prm}"`);
  });

  it('accepts a token within the clock tolerance', async () => {
    expect((await call(await as.sign(claims({ exp: now() - 10 })))).status).toBe(200);
    expect((await call(await as.sign(claims({ nbf: now() + 10 })))).status).toBe(200);
  });

  it('refuses an expired token', async () => {
    await expectInvalid(
      await call(await as.sign(claims({ exp: now() - 120 }))),
      'The access token has expired',
    );
  });

  it('refuses a token that is not valid yet', async () => {
    await expectInvalid(
      await call(await as.sign(claims({ nbf: now() + 120 }))),
      'The access token is not valid yet',
    );
  });

  it('refuses a token issued for another resource, or for none', async () => {
    await expectInvalid(
      await call(await as.sign(claims({ aud: 'https://other.example/mcp' }))),
      'The access token was not issued for this server',
    );
    await expectInvalid(
      await call(await as.sign(claims({ aud: `${server.origin}/other` }))),
      'The access token was not issued for this server',
    );
    await expectInvalid(
      await call(await as.sign(claims({ aud: undefined }))),
      'The access token was not issued for this server',
    );
  });

  it('refuses a token from another issuer', async () => {
    await expectInvalid(
      await call(await as.sign(claims({ iss: 'https://evil.example' }))),
      'The access token was not issued by the expected authorization server',
    );
  });

  it('refuses a token without exp or sub', async () => {
    await expectInvalid(
      await call(await as.sign(claims({ exp: undefined }))),
      'The access token has no exp claim',
    );
    await expectInvalid(
      await call(await as.sign(claims({ sub: undefined }))),
      'The access token has no sub claim',
    );
  });

  it('refuses a token signed with another key under the same kid', async () => {
    const other = await generateKeyPair('RS256');
    await expectInvalid(
      await call(await as.sign(claims(), { key: other.privateKey })),
      "The access token's signature is not valid",
    );
  });

  it('refuses a token whose kid the JWK set does not have', async () => {
    const other = await generateKeyPair('RS256');
    await expectInvalid(
      await call(await as.sign(claims(), { key: other.privateKey, kid: 'k2' })),
      'No signing key of the authorization server matches the access token',
    );
  });

  it('refuses an unsecured token (alg: none)', async () => {
    await expectInvalid(
      await call(new UnsecuredJWT(claims()).encode()),
      'The access token is signed with an algorithm this server does not accept',
    );
  });

  it('refuses HS256 signed with the public key as the secret (algorithm confusion)', async () => {
    const forged = await new SignJWT(claims())
      .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
      .sign(new TextEncoder().encode(as.publicPem));
    await expectInvalid(
      await call(forged),
      'The access token is signed with an algorithm this server does not accept',
    );
  });

  it('refuses an algorithm outside the configured list', async () => {
    server.use(oauth({ algorithms: ['ES256'] }));
    try {
      await expectInvalid(
        await call(await as.sign(claims())),
        'The access token is signed with an algorithm this server does not accept',
      );
    } finally {
      server.use(oauth());
    }
  });

  it('refuses garbage and a tampered payload', async () => {
    await expectInvalid(await call('not.a.jwt'), 'The access token is not valid');
    const [header, , signature] = (await as.sign(claims())).split('.');
    const payload = Buffer.from(JSON.stringify(claims({ sub: 'admin' }))).toString('base64url');
    await expectInvalid(
      await call(`${header}.${payload}.${signature}`),
      "The access token's signature is not valid",
    );
  });

  it('refuses a malformed scope claim', async () => {
    await expectInvalid(
      await call(await as.sign(claims({ scope: ['a'] }))),
      'The access token has a malformed scope claim',
    );
    await expectInvalid(
      await call(await as.sign(claims({ scope: undefined, scp: [1] }))),
      'The access token has a malformed scope claim',
    );
  });

  it('never echoes the token or logs it', async () => {
    const token = await as.sign(claims({ exp: now() - 600 }));
    const lines: string[] = [];
    const record = (...args: unknown[]): void => {
      lines.push(JSON.stringify(args));
    };
    server.use(
      createAuthenticator(
        { oauth: { issuer: as.issuer, jwksUri: as.jwksUri, audience: server.url } },
        { logger: { error: record, warn: record, info: record, debug: record } },
      ),
    );
    try {
      const response = await call(token);
      const text = `${response.headers.get('www-authenticate')} ${await response.text()}`;
      expect(text).not.toContain(token);
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.join('\n')).not.toContain(token.split('.')[2]);
    } finally {
      server.use(oauth());
    }
  });
});

describe('required scopes', () => {
  beforeAll(() => server.use(oauth({ requiredScopes: ['files:read', 'mcp'] })));
  afterAll(() => server.use(oauth()));

  it('asks for the required scopes in the first 401 challenge', async () => {
    const response = await call();
    expect(response.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${prm}", scope="files:read mcp"`,
    );
  });

  it('refuses a valid token missing one with 403 insufficient_scope naming all of them', async () => {
    const response = await call(await as.sign(claims({ scope: 'files:read' })));
    expect(response.status).toBe(403);
    expect(response.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${prm}", scope="files:read mcp", error="insufficient_scope", error_description="The access token lacks the scopes mcp"`,
    );
  });

  it('lets a token with every required scope in', async () => {
    expect((await call(await as.sign(claims({ scope: 'mcp files:read extra' })))).status).toBe(200);
  });

  it('builds per-operation 403 challenges for access rules', async () => {
    const response = oauth().insufficientScope(['files:write']);
    expect(response.status).toBe(403);
    expect(response.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${prm}", scope="files:write", error="insufficient_scope", error_description="The access token lacks the scopes this operation needs"`,
    );
  });
});

describe('when the keys cannot be fetched', () => {
  afterAll(() => {
    as.mode = 'ok';
    server.use(oauth());
  });

  it.each(['down', 'not-json', 'not-a-jwks', 'error-500'] as const)(
    'fails closed with 503 while the JWK set is %s, and recovers when it returns',
    async (mode) => {
      as.mode = mode;
      server.use(oauth());
      const token = await as.sign(claims());
      const before = as.jwksRequests;
      const refused = await call(token);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(await refused.json()).toEqual({
        error: 'temporarily_unavailable',
        error_description:
          "The authorization server's signing keys cannot be fetched; the token could not be verified. Try again later.",
      });
      expect((await call(token)).status).toBe(503);
      expect(as.jwksRequests - before).toBe(2);
      as.mode = 'ok';
      const recovered = await call(token);
      expect(recovered.status).toBe(200);
    },
  );

  it('fails closed when nothing listens at the JWK set URL', async () => {
    server.use(oauth({ jwksUri: 'http://127.0.0.1:1/jwks.json' }));
    expect((await call(await as.sign(claims()))).status).toBe(503);
  });

  it('still refuses a token that is bad on its face with 401 while the keys are down', async () => {
    as.mode = 'down';
    server.use(oauth());
    await expectInvalid(
      await call(new UnsecuredJWT(claims()).encode()),
      'The access token is signed with an algorithm this server does not accept',
    );
    await expectInvalid(await call('not.a.jwt'), 'The access token is not valid');
    as.mode = 'ok';
  });

  it('keeps serving from the cached keys when the JWK set goes down later', async () => {
    server.use(oauth());
    const token = await as.sign(claims());
    expect((await call(token)).status).toBe(200);
    as.mode = 'down';
    expect((await call(token)).status).toBe(200);
    as.mode = 'ok';
  });
});

describe('discovery of the JWK set', () => {
  afterAll(() => server.use(oauth()));

  it('finds jwks_uri in the authorization server metadata when none is configured', async () => {
    server.use(createAuthenticator({ oauth: { issuer: as.issuer, audience: server.url } }));
    expect((await call(await as.sign(claims()))).status).toBe(200);
  });

  /** An authenticator whose warnings are kept. */
  function discovering(issuer: string): { auth: Authenticator; warnings: string[] } {
    const warnings: string[] = [];
    const warn = (fields: unknown): void => {
      warnings.push(JSON.stringify(fields));
    };
    const noop = (): void => undefined;
    const auth = createAuthenticator(
      { oauth: { issuer, audience: server.url } },
      { logger: { error: noop, warn, info: noop, debug: noop } },
    );
    return { auth, warnings };
  }

  it('fails closed when the metadata names another issuer', async () => {
    // Its metadata at the path-inserted URL names the root issuer, not `${issuer}/tenant`.
    const { auth, warnings } = discovering(`${as.issuer}/tenant`);
    server.use(auth);
    expect((await call(await as.sign(claims({ iss: `${as.issuer}/tenant` })))).status).toBe(503);
    expect(warnings.join('\n')).toContain('names another issuer');
  });

  it('fails closed when the issuer publishes no metadata', async () => {
    const { auth, warnings } = discovering(server.origin);
    server.use(auth);
    expect((await call(await as.sign(claims({ iss: server.origin })))).status).toBe(503);
    expect(warnings.join('\n')).toContain('no authorization server metadata found');
  });
});

describe('protected resource metadata (RFC 9728)', () => {
  beforeAll(() =>
    server.use(oauth({ requiredScopes: ['mcp'], scopesSupported: ['mcp', 'files:read'] })),
  );
  afterAll(() => server.use(oauth()));

  it('is served at the path-aware well-known URL the challenge names, and at the root one', async () => {
    const challenge = (await call()).headers.get('www-authenticate') ?? '';
    const url = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
    expect(url).toBe(prm);
    for (const at of [prm, `${server.origin}/.well-known/oauth-protected-resource`]) {
      const response = await fetch(at);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain('application/json');
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(await response.json()).toEqual({
        resource: server.url,
        authorization_servers: [as.issuer],
        bearer_methods_supported: ['header'],
        scopes_supported: ['mcp', 'files:read'],
      });
    }
  });

  it('advertises the required scopes when scopesSupported is not set, and none when there are none', async () => {
    server.use(oauth({ requiredScopes: ['mcp'] }));
    expect(await (await fetch(prm)).json()).toMatchObject({ scopes_supported: ['mcp'] });
    server.use(oauth());
    expect(await (await fetch(prm)).json()).not.toHaveProperty('scopes_supported');
  });

  it('answers HEAD and a CORS preflight, and refuses other methods', async () => {
    expect((await fetch(prm, { method: 'HEAD' })).status).toBe(200);
    const preflight = await fetch(prm, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' },
    });
    expect(preflight.status).toBe(204);
    const post = await fetch(prm, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });

  it('leaves other paths alone', async () => {
    expect((await fetch(`${server.origin}/.well-known/oauth-authorization-server`)).status).toBe(
      404,
    );
    expect(
      (await fetch(`${server.origin}/.well-known/oauth-protected-resource/other`)).status,
    ).toBe(404);
  });

  it('names the public audience URL, not the address the request reached', async () => {
    const auth = createAuthenticator({
      oauth: {
        issuer: 'https://as.example.com',
        jwksUri: 'https://as.example.com/jwks',
        audience: 'https://mcp.example.com/team/mcp',
      },
    });
    expect(auth.resourceMetadataUrl).toBe(
      'https://mcp.example.com/.well-known/oauth-protected-resource/team/mcp',
    );
    const response = auth.wellKnown(
      new Request('http://127.0.0.1:7337/.well-known/oauth-protected-resource/team/mcp'),
    );
    expect(await response?.json()).toMatchObject({
      resource: 'https://mcp.example.com/team/mcp',
      authorization_servers: ['https://as.example.com'],
    });
  });
});
