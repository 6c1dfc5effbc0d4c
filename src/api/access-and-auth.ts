/**
 * Who may do what: HTTP authentication, access rules and principals, and the policy around every
 * operation (rate limits, concurrency, deadlines, audit). Re-exported by src/index.ts.
 */

/**
 * HTTP authentication: static bearer tokens (stored as SHA-256 digests) and OAuth 2.1 access tokens.
 *
 * @example
 * ```ts
 * const { token, sha256 } = generateToken(); // give `token` to the client, keep `sha256`
 * await reservoir.listen({ port: 7337, auth: createAuthenticator({ tokens: [{ name: 'ci', sha256, scopes: ['docs'] }] }) });
 * ```
 */
export { createAuthenticator, hashToken, generateToken } from '../http/auth.js';
export type { Authenticator, Authentication } from '../http/auth.js';
export type { AuthOptions, OAuthOptions, StaticTokenOptions } from '../http/auth-options.js';

/**
 * Access rules: who may do what to which URIs, applied on every route to a resource.
 *
 * @example
 * ```ts
 * createReservoir({ providers, access: new AccessPolicy({ rules: [{ scopes: ['docs'], allow: ['file:///srv/docs/**'] }] }) });
 * ```
 */
export { AccessPolicy, OPERATIONS } from '../core/access.js';
export type { AccessRule, AccessOptions, Operation } from '../core/access.js';
export { LOCAL_PRINCIPAL, ANONYMOUS_PRINCIPAL } from '../core/principal.js';
export type { Principal } from '../core/principal.js';

/**
 * Rate limits, concurrency caps, deadlines and the audit log (see docs/operations.md).
 *
 * @example
 * ```ts
 * createReservoir({ providers, policy: { rateLimit: { requests: { perSecond: 20 } }, audit: { sink: 'file', path: 'audit.log' } } });
 * ```
 */
export type { PolicyOptions } from '../server/policy.js';
export { OPERATION_CHANNEL } from '../policy/index.js';
