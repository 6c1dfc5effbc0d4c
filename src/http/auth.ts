/**
 * Who is calling the HTTP endpoint. `authenticate` turns a request into a Principal (and the SDK's
 * AuthInfo for handlers) or into the 400/401/403/503 to send as it is, with the RFC 6750
 * `WWW-Authenticate` challenge; `wellKnown` serves the RFC 9728 protected resource metadata that
 * the challenge points to. Static tokens are kept as SHA-256 digests and compared in constant time
 * against every configured digest; OAuth access tokens are JWTs verified in auth-jwt.ts.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import {
  getOAuthProtectedResourceMetadataUrl,
  OAuthError,
  OAuthErrorCode,
  type AuthInfo,
  type OAuthProtectedResourceMetadata,
} from '@modelcontextprotocol/server';
import { ConfigError } from '../core/errors.js';
import { silentLogger, type Logger } from '../core/log.js';
import { ANONYMOUS_PRINCIPAL, type Principal } from '../core/principal.js';
import { createJwtVerifier } from './auth-jwt.js';
import { resolveAuthOptions, type AuthOptions, type OAuthOptions } from './auth-options.js';
import { definedProps } from '../core/defined.js';

export {
  authOptions,
  JWT_ALGORITHMS,
  type AuthOptions,
  type ResolvedAuthOptions,
  type OAuthOptions,
  type StaticTokenOptions,
} from './auth-options.js';

/** The path of the RFC 9728 document; the path-aware form appends the resource's path. */
export const PROTECTED_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';
/** Seconds a client should wait before retrying when the authorization server's keys are unreachable. */
export const KEYS_RETRY_AFTER_SECONDS = 5;
/** Shortest static token `hashToken` accepts: digests of short tokens are easy to reverse. */
export const MIN_TOKEN_LENGTH = 32;

/** A caller the endpoint let in. `authInfo` is what the SDK hands to handlers as `ctx.http.authInfo`. */
export interface Authentication {
  principal: Principal;
  /** Absent for anonymous callers. Holds the raw token (the SDK's contract): never log it. */
  authInfo?: AuthInfo;
}

export interface Authenticator {
  /** The caller, or the response that refuses the request (send it as it is). */
  authenticate(request: Request): Promise<Authentication | Response>;
  /** The protected resource metadata when `request` asks for it and OAuth is configured. */
  wellKnown(request: Request): Response | undefined;
  /** A 403 `insufficient_scope` challenge naming the scopes an operation needs (for access rules). */
  insufficientScope(scopes: readonly string[], description?: string): Response;
  /** Where the protected resource metadata lives; undefined without OAuth. */
  readonly resourceMetadataUrl: string | undefined;
}

/**
 * Builds the authenticator from validated options; a bad option throws a ConfigError naming it.
 *
 * @example
 * const auth = createAuthenticator({ tokens: [{ name: 'ci', sha256: hashToken(process.env.CI_TOKEN!), scopes: ['read'] }] });
 * const result = await auth.authenticate(request);
 * if (result instanceof Response) return result;
 * return handler.fetch(request, { authInfo: result.authInfo });
 */
export function createAuthenticator(
  options: AuthOptions,
  context: { logger?: Logger } = {},
): Authenticator {
  const resolved = resolveAuthOptions(options);
  const logger = context.logger ?? silentLogger;
  const tokens = resolved.tokens.map((token) => ({
    digest: Buffer.from(token.sha256, 'hex'),
    principal: Object.freeze<Principal>({
      id: token.name,
      kind: 'token',
      scopes: Object.freeze([...token.scopes]),
    }),
  }));
  const oauth = resolved.oauth;
  const jwt = oauth === undefined ? undefined : createJwtVerifier(oauth, logger);
  const resource = oauth === undefined ? undefined : protectedResource(oauth);
  const metadataUrl = resource?.url;
  const requiredScopes = oauth?.requiredScopes ?? [];

  const challenge = (
    status: 400 | 401 | 403,
    error?: { code: string; description: string; scopes?: readonly string[] },
  ): Response => {
    const params: [string, string][] = [];
    if (metadataUrl !== undefined) params.push(['resource_metadata', metadataUrl]);
    const scopes = error?.scopes ?? requiredScopes;
    if (scopes.length > 0) params.push(['scope', scopes.join(' ')]);
    if (error !== undefined)
      params.push(['error', error.code], ['error_description', error.description]);
    if (params.length === 0) params.push(['realm', 'reservoir']);
    const header = `Bearer ${params.map(([name, value]) => `${name}="${quoted(value)}"`).join(', ')}`;
    // No credentials at all: the challenge carries no error code (RFC 6750 §3.1), and the body says
    // what is missing rather than calling a token that was never sent invalid.
    const body =
      error === undefined
        ? {
            error: OAuthErrorCode.InvalidRequest,
            error_description:
              'Authentication required: the request carries no access token; send it as Authorization: Bearer <token>',
          }
        : new OAuthError(error.code, error.description).toResponseObject();
    return Response.json(body, {
      status,
      headers: { 'www-authenticate': header, 'cache-control': 'no-store' },
    });
  };
  const refuse = (
    status: 400 | 401 | 403,
    code: OAuthErrorCode,
    description: string,
    scopes?: readonly string[],
  ): Response => {
    logger.debug(
      { status, error: code, reason: description },
      'http request refused by authentication',
    );
    return challenge(status, { code, description, ...definedProps({ scopes }) });
  };

  return {
    resourceMetadataUrl: metadataUrl,

    async authenticate(request) {
      if (new URL(request.url).searchParams.has('access_token')) {
        return refuse(
          400,
          OAuthErrorCode.InvalidRequest,
          'Send the access token in the Authorization header, never in the URL',
        );
      }
      const credentials = bearerCredentials(request.headers.get('authorization'));
      if (credentials.kind === 'none')
        return resolved.anonymous ? { principal: ANONYMOUS_PRINCIPAL } : challenge(401);
      if (credentials.kind === 'malformed')
        return refuse(
          400,
          OAuthErrorCode.InvalidRequest,
          "Malformed Authorization header; expected 'Bearer <token>'",
        );
      const token = credentials.token;

      const matched = matchStaticToken(token, tokens);
      if (matched !== undefined) {
        return {
          principal: matched,
          authInfo: {
            token,
            clientId: matched.id,
            scopes: [...matched.scopes],
            extra: { principal: matched },
          },
        };
      }
      if (jwt === undefined || metadataUrl === undefined)
        return refuse(401, OAuthErrorCode.InvalidToken, 'The access token is not valid');
      const outcome = await jwt.verify(token);
      if (!outcome.ok) {
        if (outcome.reason === 'invalid')
          return refuse(401, OAuthErrorCode.InvalidToken, outcome.description);
        // Fail closed without blaming the token: RFC 6750 has no error code for "cannot verify now".
        return Response.json(
          new OAuthError(
            OAuthErrorCode.TemporarilyUnavailable,
            outcome.description,
          ).toResponseObject(),
          {
            status: 503,
            headers: {
              'retry-after': String(KEYS_RETRY_AFTER_SECONDS),
              'cache-control': 'no-store',
            },
          },
        );
      }
      const missing = requiredScopes.filter((scope) => !outcome.principal.scopes.includes(scope));
      if (missing.length > 0)
        return refuse(
          403,
          OAuthErrorCode.InsufficientScope,
          `The access token lacks the scopes ${missing.join(' ')}`,
          requiredScopes,
        );
      return {
        principal: outcome.principal,
        authInfo: { ...outcome.authInfo, resourceMetadataUrl: metadataUrl },
      };
    },

    wellKnown(request) {
      if (resource === undefined) return undefined;
      const path = new URL(request.url).pathname.replace(/(.)\/$/, '$1');
      return resource.paths.includes(path)
        ? metadataResponse(request, resource.document)
        : undefined;
    },

    insufficientScope(
      scopes,
      description = 'The access token lacks the scopes this operation needs',
    ) {
      return challenge(403, { code: OAuthErrorCode.InsufficientScope, description, scopes });
    },
  };
}

/**
 * The SHA-256 digest (hex) of a static token, as `tokens[].sha256` wants it. The token must be at
 * least 32 characters of RFC 6750 token syntax (letters, digits, `-._~+/`, trailing `=`).
 *
 * @example
 * hashToken('kZ3v…')  // '9f86d08188…'
 */
export function hashToken(token: string): string {
  if (!B64TOKEN.test(token))
    throw new ConfigError(
      'token',
      "expected letters, digits and '-._~+/' (with optional trailing '=')",
    );
  if (token.length < MIN_TOKEN_LENGTH)
    throw new ConfigError(
      'token',
      `expected at least ${MIN_TOKEN_LENGTH} characters, got ${token.length}; use a random token: reservoir token makes one (generateToken() in the library)`,
    );
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * A new random static token (256 bits, base64url) and its digest.
 *
 * @example
 * const { token, sha256 } = generateToken();  // give `token` to the client, put `sha256` in the config
 */
export function generateToken(): { token: string; sha256: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, sha256: hashToken(token) };
}

/** RFC 6750 §2.1 b64token. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

type Credentials = { kind: 'none' } | { kind: 'malformed' } | { kind: 'bearer'; token: string };

/**
 * Reads `Authorization`. No header, or another scheme (say a proxy's Basic), is no bearer
 * credentials; `Bearer` with no token, a second token, or characters outside b64token is malformed.
 */
function bearerCredentials(header: string | null): Credentials {
  if (header === null || header.trim() === '') return { kind: 'none' };
  const match = /^(\S+)(?: +(.*))?$/.exec(header.trim());
  if (match === null) return { kind: 'malformed' };
  if (match[1]?.toLowerCase() !== 'bearer') return { kind: 'none' };
  const token = match[2] ?? '';
  return B64TOKEN.test(token) ? { kind: 'bearer', token } : { kind: 'malformed' };
}

/** Hashes the presented token and compares it with every digest, so timing does not tell which matched. */
function matchStaticToken(
  token: string,
  tokens: readonly { digest: Buffer; principal: Principal }[],
): Principal | undefined {
  const presented = createHash('sha256').update(token, 'utf8').digest();
  let matched: Principal | undefined;
  for (const candidate of tokens) {
    const equal = timingSafeEqual(presented, candidate.digest);
    matched = equal ? candidate.principal : matched;
  }
  return matched;
}

/** An HTTP quoted-string: `\` and `"` escaped, anything outside printable ASCII replaced. */
function quoted(value: string): string {
  return value.replaceAll(/[\\"]/g, '\\$&').replaceAll(/[^\x20-\x7E]/g, ' ');
}

/**
 * The RFC 9728 document and where it is served: the path-aware URL built from the audience (the
 * one challenges name) and the root one. `resource` is the audience exactly as configured, the
 * value clients send as RFC 8707 `resource` and the authorization server puts in `aud`.
 */
function protectedResource(oauth: OAuthOptions): {
  url: string;
  paths: string[];
  document: OAuthProtectedResourceMetadata;
} {
  const url = getOAuthProtectedResourceMetadataUrl(new URL(oauth.audience));
  const scopes = oauth.scopesSupported ?? oauth.requiredScopes;
  const document: OAuthProtectedResourceMetadata = {
    resource: oauth.audience,
    authorization_servers: [oauth.issuer],
    bearer_methods_supported: ['header'],
    ...definedProps({ scopes_supported: scopes.length > 0 ? scopes : undefined }),
  };
  return { url, paths: [PROTECTED_RESOURCE_METADATA_PATH, new URL(url).pathname], document };
}

/** The metadata document: GET/HEAD, CORS-readable (browser clients discover from it), OPTIONS preflight. */
function metadataResponse(request: Request, metadata: OAuthProtectedResourceMetadata): Response {
  const cors = { 'access-control-allow-origin': '*' };
  if (request.method === 'OPTIONS') {
    return new Response(null, {
      status: 204,
      headers: {
        ...cors,
        'access-control-allow-methods': 'GET, HEAD, OPTIONS',
        'access-control-allow-headers': request.headers.get('access-control-request-headers') ?? '',
      },
    });
  }
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    return Response.json(
      { error: 'method_not_allowed', error_description: `${request.method} is not allowed here` },
      { status: 405, headers: { ...cors, allow: 'GET, HEAD, OPTIONS' } },
    );
  }
  const response = Response.json(metadata, {
    headers: { ...cors, 'cache-control': 'max-age=3600' },
  });
  return request.method === 'HEAD' ? new Response(null, { headers: response.headers }) : response;
}
