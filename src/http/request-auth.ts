/**
 * Who a request to the endpoint is, settled from its headers alone before any body is read: the
 * authenticator's verdict, refusals written (and counted against the client's address, 429 past
 * the limit), and the auth info of a caller without credentials where that is allowed.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/server';
import { ANONYMOUS_PRINCIPAL, type Principal } from '../core/principal.js';
import type { Authenticator } from './auth.js';
import { presentedCredential, type AuthFailureGuard } from './auth-failures.js';

/**
 * Authenticates from the request's headers alone (no body is read). Resolves with the auth info to
 * pass on, or undefined after writing the refusal (401, 403, 400, 503) the authenticator chose — or
 * a 429 when the client's address has been refused too often (the guard records every refusal).
 */
export async function authenticateOrRefuse(
  req: IncomingMessage,
  res: ServerResponse,
  auth: Authenticator,
  guard: AuthFailureGuard,
): Promise<AuthInfo | undefined> {
  // Duplicate Authorization headers stay visible (joined), so the authenticator can refuse them.
  const authorization = req.headersDistinct['authorization']?.join(', ');
  const address = req.socket.remoteAddress ?? 'unknown';
  const presented = presentedCredential(authorization);
  const wait = guard.retryAfter(address);
  if (wait !== undefined) {
    guard.refused({ address, status: 429, reason: 'too_many_failures', presented });
    res.writeHead(429, {
      'content-type': 'application/json',
      'retry-after': String(wait),
      'cache-control': 'no-store',
    });
    res.end(
      JSON.stringify({
        error: 'too_many_failures',
        error_description: `Too many failed authentications from this address; retry after ${wait} s`,
      }),
    );
    return undefined;
  }
  const outcome = await auth.authenticate(
    new Request(
      new URL(req.url ?? '/', 'http://local'),
      authorization === undefined ? {} : { headers: { authorization } },
    ),
  );
  if (!(outcome instanceof Response)) return outcome.authInfo ?? anonymousAuth(outcome.principal);
  const headers: Record<string, string> = {};
  outcome.headers.forEach((value, name) => (headers[name] = value));
  const body = Buffer.from(await outcome.arrayBuffer());
  if (outcome.status === 400 || outcome.status === 401 || outcome.status === 403) {
    // The challenge's error code; a bare challenge (no code) means no bearer credentials came.
    const code = /\berror="([^"]*)"/.exec(headers['www-authenticate'] ?? '')?.[1];
    const reason = code ?? (outcome.status === 401 ? 'missing_token' : 'refused');
    guard.refused({ address, status: outcome.status, reason, presented });
  }
  res.writeHead(outcome.status, headers).end(body);
  return undefined;
}

/** Whether `req` carries credentials the authenticator accepts (never refuses: /readyz answers either way). */
export async function authenticated(
  req: IncomingMessage,
  auth: Authenticator | undefined,
): Promise<boolean> {
  const authorization = req.headersDistinct['authorization']?.join(', ');
  if (auth === undefined || authorization === undefined) return false;
  try {
    const outcome = await auth.authenticate(
      new Request(new URL(req.url ?? '/', 'http://local'), { headers: { authorization } }),
    );
    return !(outcome instanceof Response) && outcome.principal.kind !== 'anonymous';
  } catch {
    return false;
  }
}

/** The auth info of a request made without credentials, where that is allowed. */
export const ANONYMOUS_AUTH: AuthInfo = anonymousAuth(ANONYMOUS_PRINCIPAL);

function anonymousAuth(principal: Principal): AuthInfo {
  return { token: '', clientId: principal.id, scopes: [...principal.scopes], extra: { principal } };
}
