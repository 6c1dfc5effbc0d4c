/**
 * Files that hold secrets, which a files source skips by default: environment files, private keys
 * and key stores, package-registry and login credentials, and the credential files of cloud and
 * container tools. They are matched like `.gitignore` patterns, case-insensitively: a pattern without
 * a `/` matches a name at any depth, one that starts with `**` a path at any depth, a trailing `/` a
 * directory with everything in it. The list is documented in docs/config.md
 * ("Files that hold secrets"); keep the two in step.
 *
 * Chosen to skip what is a secret almost whenever it exists, and to leave common names that usually
 * are not (e.g. `secrets.yaml`, `config.json`) to `exclude`. Public halves and templates are served:
 * `id_*.pub`, and `.env.example`, `.env.sample`, `.env.template`, `.env.dist` (committed on purpose,
 * without values).
 */
import ignore, { type Ignore } from 'ignore';

export const DEFAULT_SECRET_PATTERNS: readonly string[] = [
  // Environment files (and a directory so named), but not their committed templates.
  '.env',
  '.env.*',
  '!.env.example',
  '!.env.sample',
  '!.env.template',
  '!.env.dist',
  // Private keys, certificates bundled with keys, key stores.
  '*.pem',
  '*.key',
  '*.p12',
  '*.pfx',
  '*.jks',
  '*.keystore',
  'id_rsa*',
  'id_dsa*',
  'id_ecdsa*',
  'id_ed25519*',
  '!id_*.pub',
  // Registry, login and database credentials.
  '.npmrc',
  '.pypirc',
  '.netrc',
  '_netrc',
  '.pgpass',
  '.git-credentials',
  '.htpasswd',
  // Cloud and container tools.
  '**/.aws/credentials',
  '**/.azure/',
  '**/.config/gcloud/application_default_credentials.json',
  '**/.config/gcloud/credentials.db',
  '**/.config/gcloud/access_tokens.db',
  '**/.config/gcloud/legacy_credentials/',
  '**/.docker/config.json',
  '**/.kube/config',
];

export interface SecretOptions {
  /** Serve files that hold secrets (the default list and `secretPatterns`). @default false */
  serveSecrets?: boolean | undefined;
  /**
   * Patterns added after the default list, gitignore syntax: a pattern skips more, a `!pattern`
   * serves what the defaults skip (e.g. `!*.pem` for certificates). @default []
   */
  secretPatterns?: readonly string[] | undefined;
}

/** The matcher for secret files, or undefined when they are served. Throws on a pattern the matcher refuses. */
export function secretMatcher(options: SecretOptions): Ignore | undefined {
  if (options.serveSecrets === true) return undefined;
  return ignore({ ignorecase: true }).add([
    ...DEFAULT_SECRET_PATTERNS,
    ...(options.secretPatterns ?? []),
  ]);
}
