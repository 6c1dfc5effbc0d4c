/**
 * The options of HTTP authentication, in zod: `auth` in reservoir.yaml and the argument of
 * `createAuthenticator`. Every object is strict, and the checks that need more than a type (URLs,
 * digests, duplicates, a configuration that could never let anyone in) are refinements, so the
 * config loader reports them with the rest of the file's problems.
 */
import { z } from 'zod';
import { ConfigError } from '../core/errors.js';

/**
 * JWS algorithms an OAuth access token may be signed with. Only asymmetric ones: the keys come
 * from the authorization server's public JWK set, so an HMAC "key" would be public too.
 */
export const JWT_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
] as const;

/** An OAuth scope token (RFC 6749 §3.3): printable ASCII without space, `"` or `\`. */
const SCOPE = /^[\x21\x23-\x5B\x5D-\x7E]+$/;
const scopes = z.array(
  z
    .string()
    .regex(SCOPE, 'expected a scope: printable ASCII without spaces, quotes or backslashes'),
);

/** An absolute http(s) URL without a fragment; `secure` also demands https outside loopback. */
function url(what: string, options: { secure: boolean; query: boolean }) {
  return z.string().superRefine((value, ctx) => {
    const problem = urlProblem(value, options);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: `${what}: ${problem}` });
  });
}

const StaticTokenSchema = z
  .strictObject({
    name: z
      .string()
      .min(1)
      .max(200)
      .refine(
        (name) => ![...name].some((char) => char < ' ' || char === '\x7F'),
        'expected a name without control characters',
      )
      .meta({
        description:
          'Who holds the token: the principal id that access rules, rate limits and the audit log see.',
      }),
    sha256: z
      .string()
      .regex(
        /^[0-9a-fA-F]{64}$/,
        'expected the SHA-256 digest of the token, 64 hex digits (make one with `reservoir token`)',
      )
      .meta({
        description:
          'SHA-256 of the token, hex. The token itself is never stored; `reservoir token` prints a new token and its digest.',
      }),
    scopes: scopes.default([]).meta({ description: 'Scopes the token grants. Default: none.' }),
  })
  .meta({ description: 'A static bearer token.' });

const OAuthSchema = z
  .strictObject({
    issuer: url('issuer', { secure: true, query: false }).meta({
      description:
        "The authorization server's issuer identifier, exactly as in its metadata and in the tokens' `iss` claim.",
    }),
    jwksUri: url('jwksUri', { secure: true, query: true }).optional().meta({
      description:
        "The authorization server's JWK set. Default: the `jwks_uri` of its RFC 8414 / OpenID metadata.",
    }),
    audience: url('audience', { secure: false, query: true }).meta({
      description:
        "This server's public URL (e.g. https://mcp.example.com/mcp): tokens must name it in `aud`; it is the `resource` of the protected resource metadata.",
    }),
    requiredScopes: scopes.default([]).meta({
      description:
        'Scopes every OAuth token must carry (403 insufficient_scope otherwise). Default: none.',
    }),
    scopesSupported: scopes.optional().meta({
      description: 'Scopes advertised in the protected resource metadata. Default: requiredScopes.',
    }),
    algorithms: z
      .array(z.enum(JWT_ALGORITHMS))
      .min(1)
      .default([...JWT_ALGORITHMS])
      .meta({ description: 'JWS algorithms accepted (asymmetric only). Default: all of them.' }),
    clockToleranceSeconds: z
      .int()
      .min(0)
      .max(300)
      .default(30)
      .meta({ description: 'Clock skew allowed on exp and nbf, in seconds. Default: 30.' }),
  })
  .meta({
    description:
      'OAuth 2.1 resource server: accept JWT access tokens issued for this server by one authorization server.',
  });

export const authOptions = z
  .strictObject({
    anonymous: z.boolean().default(false).meta({
      description:
        'Serve requests without credentials as the `anonymous` principal. Default: false (401).',
    }),
    tokens: z
      .array(StaticTokenSchema)
      .default([])
      .meta({ description: 'Static bearer tokens, stored as SHA-256 digests.' }),
    oauth: OAuthSchema.optional(),
  })
  .superRefine((options, ctx) => {
    const names = new Map<string, number>();
    const digests = new Map<string, number>();
    options.tokens.forEach((token, index) => {
      const sameName = names.get(token.name);
      if (sameName !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['tokens', index, 'name'],
          message: `duplicate token name '${token.name}' (also tokens[${sameName}])`,
        });
      const sameDigest = digests.get(token.sha256.toLowerCase());
      if (sameDigest !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['tokens', index, 'sha256'],
          message: `the same token as tokens[${sameDigest}]`,
        });
      names.set(token.name, index);
      digests.set(token.sha256.toLowerCase(), index);
    });
    if (!options.anonymous && options.tokens.length === 0 && options.oauth === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: [],
        message: 'nobody could ever be let in: configure tokens or oauth, or set anonymous: true',
      });
    }
  })
  .meta({
    description:
      'Who may use the HTTP endpoint: static bearer tokens, OAuth access tokens, anonymous callers.',
  });

/** The options as written (defaults optional). */
export type AuthOptions = z.input<typeof authOptions>;
/** The options after validation, defaults filled in. */
export type ResolvedAuthOptions = z.output<typeof authOptions>;
export type OAuthOptions = NonNullable<ResolvedAuthOptions['oauth']>;
export type StaticTokenOptions = ResolvedAuthOptions['tokens'][number];

/** Validates options, throwing a ConfigError that names the first bad field (e.g. `auth.tokens[1].sha256`). */
export function resolveAuthOptions(options: AuthOptions, prefix = 'auth'): ResolvedAuthOptions {
  const parsed = authOptions.safeParse(options);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => ({
    field: fieldName(prefix, issue.path),
    message: issue.message,
  }));
  const first = problems[0] ?? { field: prefix, message: 'invalid' };
  throw new ConfigError(first.field, first.message, { problems });
}

function fieldName(prefix: string, path: readonly PropertyKey[]): string {
  let name = prefix;
  for (const segment of path)
    name += typeof segment === 'number' ? `[${segment}]` : `.${String(segment)}`;
  return name;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Whether a URL is on this machine (where plain http is acceptable). */
export function isLoopback(href: string): boolean {
  return LOOPBACK.has(new URL(href).hostname);
}

function urlProblem(
  value: string,
  options: { secure: boolean; query: boolean },
): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    return 'expected an absolute URL';
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return 'expected an http(s) URL';
  if (options.secure && parsed.protocol !== 'https:' && !LOOPBACK.has(parsed.hostname))
    return 'expected https (plain http only on localhost)';
  if (parsed.hash !== '' || value.includes('#')) return 'expected no fragment (#…)';
  if (!options.query && (parsed.search !== '' || value.includes('?')))
    return 'expected no query (?…)';
  if (parsed.username !== '' || parsed.password !== '') return 'expected no credentials in the URL';
  return undefined;
}
