/**
 * OAuth 2.1 resource server: verifies JWT access tokens with `jose` against the authorization
 * server's public JWK set (fetched, cached and refreshed by `createRemoteJWKSet`). A token is
 * accepted only when its signature, algorithm, issuer, audience (this server), expiry and
 * not-before all check out. When the keys cannot be fetched the token cannot be verified, and the
 * answer says so (`unavailable`) instead of calling a possibly good token invalid.
 */
import type * as Jose from 'jose';
import type { JWTPayload, JWTVerifyGetKey } from 'jose';
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { Logger } from '../core/log.js';
import type { Principal } from '../core/principal.js';
import { isLoopback, type OAuthOptions } from './auth-options.js';
import { definedProps } from '../core/defined.js';

/** How long one fetch of metadata or keys may take. */
const FETCH_TIMEOUT_MS = 5_000;

export type JwtOutcome =
  | { ok: true; principal: Principal; authInfo: AuthInfo }
  | { ok: false; reason: 'invalid' | 'unavailable'; description: string };

export interface JwtVerifier {
  verify(token: string): Promise<JwtOutcome>;
}

/** The key source failed for reasons that are not the token's (network, garbage, no metadata). */
class KeysUnavailable extends Error {}

type JoseErrors = typeof Jose.errors;

/** `jose`, loaded when the first token is verified: a server without OAuth never loads it. */
let joseLoading: Promise<typeof Jose> | undefined;
function loadJose(): Promise<typeof Jose> {
  joseLoading ??= import('jose');
  return joseLoading;
}

export function createJwtVerifier(options: OAuthOptions, logger: Logger): JwtVerifier {
  const audiences = audienceVariants(options.audience);
  const resource = new URL(options.audience);
  let remote: JWTVerifyGetKey | undefined;
  let discovery: Promise<string> | undefined;

  const jwksUri = (): Promise<string> => {
    if (options.jwksUri !== undefined) return Promise.resolve(options.jwksUri);
    // One discovery at a time; a failed one is forgotten so the next request tries again.
    discovery ??= discoverJwksUri(options.issuer).catch((error: unknown) => {
      discovery = undefined;
      throw error;
    });
    return discovery;
  };

  let getKey: JWTVerifyGetKey | undefined;
  const keyGetter =
    ({ createRemoteJWKSet, errors }: typeof Jose): JWTVerifyGetKey =>
    async (header, token) => {
      try {
        remote ??= createRemoteJWKSet(new URL(await jwksUri()), {
          timeoutDuration: FETCH_TIMEOUT_MS,
        });
        return await remote(header, token);
      } catch (error) {
        if (isTokenFault(error, errors)) throw error;
        logger.warn(
          { err: describe(error, errors), issuer: options.issuer },
          'oauth: the authorization server keys cannot be fetched',
        );
        throw new KeysUnavailable('keys unavailable', { cause: error });
      }
    };

  return {
    async verify(token) {
      const jose = await loadJose();
      getKey ??= keyGetter(jose);
      let payload: JWTPayload;
      try {
        ({ payload } = await jose.jwtVerify(token, getKey, {
          issuer: options.issuer,
          audience: audiences,
          algorithms: options.algorithms,
          clockTolerance: options.clockToleranceSeconds,
          requiredClaims: ['exp', 'sub'],
        }));
      } catch (error) {
        if (error instanceof KeysUnavailable) {
          return {
            ok: false,
            reason: 'unavailable',
            description:
              "The authorization server's signing keys cannot be fetched; the token could not be verified. Try again later.",
          };
        }
        return { ok: false, reason: 'invalid', description: rejection(error, jose.errors) };
      }
      const sub = payload.sub;
      if (typeof sub !== 'string' || sub === '')
        return {
          ok: false,
          reason: 'invalid',
          description: 'The access token has no subject (sub)',
        };
      const scopes = scopesOf(payload);
      if (scopes === undefined)
        return {
          ok: false,
          reason: 'invalid',
          description: 'The access token has a malformed scope claim',
        };
      const principal: Principal = Object.freeze({
        id: sub,
        kind: 'oauth',
        scopes: Object.freeze([...scopes]),
      });
      const clientId = stringClaim(payload, 'client_id') ?? stringClaim(payload, 'azp') ?? sub;
      const authInfo: AuthInfo = {
        token,
        clientId,
        scopes,
        resource,
        extra: { principal, issuer: payload.iss, subject: sub },
        ...definedProps({ expiresAt: typeof payload.exp === 'number' ? payload.exp : undefined }),
      };
      return { ok: true, principal, authInfo };
    },
  };
}

/** Scopes from `scope` (RFC 9068: space-separated) or `scp` (array or string); undefined when malformed. */
function scopesOf(payload: JWTPayload): string[] | undefined {
  const split = (value: string): string[] => value.split(' ').filter((scope) => scope !== '');
  const { scope, scp } = payload;
  if (scope !== undefined) return typeof scope === 'string' ? split(scope) : undefined;
  if (scp === undefined) return [];
  if (typeof scp === 'string') return split(scp);
  if (Array.isArray(scp) && scp.every((item) => typeof item === 'string'))
    return scp.filter((item) => item !== '');
  return undefined;
}

function stringClaim(payload: JWTPayload, name: string): string | undefined {
  const value = payload[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The audience as configured, plus the same URL normalised and with/without one trailing slash. */
function audienceVariants(audience: string): string[] {
  const variants = new Set<string>();
  for (const form of [audience, new URL(audience).href]) {
    variants.add(form);
    variants.add(form.endsWith('/') ? form.slice(0, -1) : `${form}/`);
  }
  return [...variants];
}

/** Errors of the key lookup that the token causes: no key for its `kid`/`alg`, or an unusable alg. */
function isTokenFault(error: unknown, errors: JoseErrors): boolean {
  return (
    error instanceof errors.JWKSNoMatchingKey ||
    error instanceof errors.JWKSMultipleMatchingKeys ||
    error instanceof errors.JOSEAlgNotAllowed ||
    error instanceof errors.JOSENotSupported
  );
}

/** What the client is told. Never the token, never key material. */
function rejection(error: unknown, errors: JoseErrors): string {
  if (error instanceof errors.JWTExpired) return 'The access token has expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    switch (error.claim) {
      case 'nbf':
        return 'The access token is not valid yet';
      case 'aud':
        return 'The access token was not issued for this server';
      case 'iss':
        return 'The access token was not issued by the expected authorization server';
      default:
        return error.reason === 'missing'
          ? `The access token has no ${error.claim} claim`
          : `The access token's ${error.claim} claim is not valid`;
    }
  }
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported)
    return 'The access token is signed with an algorithm this server does not accept';
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return "The access token's signature is not valid";
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys)
    return 'No signing key of the authorization server matches the access token';
  return 'The access token is not valid';
}

function describe(error: unknown, errors: JoseErrors): { message: string; code?: string } {
  if (error instanceof errors.JOSEError) return { message: error.message, code: error.code };
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return { message: `${error.message}${cause}` };
  }
  return { message: String(error) };
}

/**
 * The `jwks_uri` from the authorization server's metadata: RFC 8414 first, then OpenID Connect
 * Discovery, in the order the MCP spec gives for issuers with and without a path. The document's
 * `issuer` must be the configured one, character for character (RFC 8414 §3.3).
 */
async function discoverJwksUri(issuer: string): Promise<string> {
  for (const url of metadataUrls(issuer)) {
    let response: Response;
    try {
      response = await fetch(url, {
        headers: { accept: 'application/json' },
        redirect: 'manual',
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      });
    } catch (error) {
      throw new KeysUnavailable(`cannot fetch ${url}`, { cause: error });
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      continue;
    }
    const metadata: unknown = await response.json().catch(() => undefined);
    if (typeof metadata !== 'object' || metadata === null)
      throw new KeysUnavailable(`${url} is not a JSON object`);
    const record = metadata as Record<string, unknown>;
    if (record['issuer'] !== issuer) throw new KeysUnavailable(`${url} names another issuer`);
    const jwks = record['jwks_uri'];
    if (typeof jwks !== 'string' || !URL.canParse(jwks))
      throw new KeysUnavailable(`${url} has no jwks_uri`);
    if (new URL(jwks).protocol !== 'https:' && !isLoopback(jwks))
      throw new KeysUnavailable(`${url} gives a jwks_uri without https`);
    return jwks;
  }
  throw new KeysUnavailable(`no authorization server metadata found for ${issuer}`);
}

function metadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  const at = (pathname: string): string => new URL(pathname, url.origin).href;
  if (path === '')
    return [at('/.well-known/oauth-authorization-server'), at('/.well-known/openid-configuration')];
  return [
    at(`/.well-known/oauth-authorization-server${path}`),
    at(`/.well-known/openid-configuration${path}`),
    at(`${path}/.well-known/openid-configuration`),
  ];
}
