/**
 * Who is asking. Every request carries a principal: the one local user over stdio, an anonymous
 * caller over HTTP when the config allows it, or whoever a bearer token or an OAuth access token
 * names. Access rules, rate limits, cursors and the audit log are keyed by it.
 */
export interface Principal {
  /** Stable identifier: `local`, `anonymous`, a static token's name, or an OAuth token's subject. */
  id: string;
  kind: 'local' | 'anonymous' | 'token' | 'oauth';
  /** Scopes granted (from the token's `scope` claim, or the static token's configuration). */
  scopes: readonly string[];
}

/** The principal of a stdio connection: the person who started the server. */
export const LOCAL_PRINCIPAL: Principal = Object.freeze({
  id: 'local',
  kind: 'local',
  scopes: Object.freeze([]),
});

/** The principal of an unauthenticated HTTP request, where the config allows anonymous access. */
export const ANONYMOUS_PRINCIPAL: Principal = Object.freeze({
  id: 'anonymous',
  kind: 'anonymous',
  scopes: Object.freeze([]),
});
