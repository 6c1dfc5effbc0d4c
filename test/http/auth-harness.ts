// Real sockets for the authentication tests: a tiny HTTP server that puts an Authenticator in front
// of a handler (through hono's Node adapter, as src/http/app.ts does), and a local authorization
// server that serves its metadata and a JWK set which can be switched to down or to garbage.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import {
  exportJWK,
  exportSPKI,
  generateKeyPair,
  SignJWT,
  type CryptoKey,
  type JWK,
  type JWTPayload,
} from 'jose';
import type { Authentication, Authenticator } from '../../src/http/auth.js';

export async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export async function stop(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

export interface AuthServer {
  /** Origin, e.g. http://127.0.0.1:4321. */
  origin: string;
  /** The MCP endpoint URL (origin + /mcp): the audience tokens are issued for. */
  url: string;
  /** Swap the authenticator in front of the handler. */
  use(authenticator: Authenticator): void;
  /** Serve requests that pass with this handler (default: the principal as JSON). */
  handle(handler: (request: Request, auth: Authentication) => Promise<Response>): void;
  close(): Promise<void>;
}

/** Starts the server first (its URL is the audience), then takes the authenticator. */
export async function startAuthServer(): Promise<AuthServer> {
  let authenticator: Authenticator | undefined;
  let handler = async (_request: Request, auth: Authentication): Promise<Response> =>
    Response.json({
      principal: auth.principal,
      clientId: auth.authInfo?.clientId ?? null,
      resourceMetadataUrl: auth.authInfo?.resourceMetadataUrl ?? null,
    });
  const server = createServer(
    getRequestListener(
      async (request) => {
        if (authenticator === undefined) return new Response('no authenticator', { status: 500 });
        const known = authenticator.wellKnown(request);
        if (known !== undefined) return known;
        if (new URL(request.url).pathname !== '/mcp') return new Response(null, { status: 404 });
        const result = await authenticator.authenticate(request);
        return result instanceof Response ? result : handler(request, result);
      },
      { overrideGlobalObjects: false },
    ),
  );
  const origin = await listen(server);
  return {
    origin,
    url: `${origin}/mcp`,
    use: (next) => {
      authenticator = next;
    },
    handle: (next) => {
      handler = next;
    },
    close: () => stop(server),
  };
}

export type JwksMode = 'ok' | 'down' | 'not-json' | 'not-a-jwks' | 'error-500';

export interface AuthorizationServer {
  /** The issuer, e.g. http://127.0.0.1:4321 (plain http is accepted on loopback). */
  issuer: string;
  jwksUri: string;
  /** Switch what the JWK set endpoint answers. */
  mode: JwksMode;
  /** Requests the JWK set endpoint received. */
  jwksRequests: number;
  /** Sign a token with the server's key (kid `k1`, RS256) unless told otherwise. */
  sign(
    claims: JWTPayload,
    options?: { key?: CryptoKey; kid?: string; alg?: string },
  ): Promise<string>;
  /** The public key in PEM (for the algorithm-confusion attack). */
  publicPem: string;
  close(): Promise<void>;
}

export async function startAuthorizationServer(): Promise<AuthorizationServer> {
  const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const publicPem = await exportSPKI(publicKey);
  let issuer = '';
  const state: AuthorizationServer = {
    issuer: '',
    jwksUri: '',
    mode: 'ok',
    jwksRequests: 0,
    publicPem,
    sign: async (claims, options = {}) =>
      new SignJWT(claims)
        .setProtectedHeader({
          alg: options.alg ?? 'RS256',
          kid: options.kid ?? 'k1',
          typ: 'at+jwt',
        })
        .sign(options.key ?? privateKey),
    close: () => stop(server),
  };
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    // Answers at the path-inserted form too, always naming the root issuer (for mismatch tests).
    if (path?.startsWith('/.well-known/oauth-authorization-server')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          response_types_supported: ['code'],
          jwks_uri: `${issuer}/jwks.json`,
        }),
      );
      return;
    }
    if (path !== '/jwks.json') {
      res.writeHead(404).end();
      return;
    }
    state.jwksRequests += 1;
    switch (state.mode) {
      case 'down':
        req.socket.destroy();
        return;
      case 'not-json':
        res.writeHead(200, { 'content-type': 'application/json' }).end('<html>maintenance</html>');
        return;
      case 'not-a-jwks':
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ keys: 'none today' }));
        return;
      case 'error-500':
        res.writeHead(500).end();
        return;
      case 'ok':
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ keys: [jwk] }));
    }
  });
  issuer = await listen(server);
  state.issuer = issuer;
  state.jwksUri = `${issuer}/jwks.json`;
  return state;
}

/** Seconds since the epoch. */
export const now = (): number => Math.floor(Date.now() / 1000);
