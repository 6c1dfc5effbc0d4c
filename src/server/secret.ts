/**
 * The keys a server signs with, and its cluster membership: the shared secret (`--secret-file`,
 * RESERVOIR_SECRET, `server.secret`), the cursor key kept in the state directory when there is no
 * shared secret, and the Redis cluster `--redis` / `server.redis` asks for. The cluster code (and
 * the Redis client) is loaded only when one is asked for.
 */
import type { Cluster } from '../cluster/index.js';
import type { LoadedConfig } from '../config/load.js';
import { ConfigError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { cursorKey } from '../search/state-dir.js';
import { definedProps } from '../core/defined.js';

/** Where the secret and the cluster come from besides the config file. */
export interface SecretSources {
  /** `--redis URL`: replaces `server.redis`. */
  redis?: string | undefined;
  /** `--secret-file PATH`. */
  secretFile?: string | undefined;
  /** RESERVOIR_SECRET. */
  env?: string | undefined;
}

/**
 * The cursor key kept in the state directory, so a cursor printed by one run (`list --json`, a
 * client across a restart) works in the next. When the directory cannot be written, cursors fall
 * back to a per-process key, with one warning.
 */
export function persistentCursorKey(
  stateDir: string,
  logger: { warn(obj: unknown, msg?: string): void },
): Uint8Array | undefined {
  try {
    return cursorKey(stateDir);
  } catch (error) {
    logger.warn(
      { err: error, stateDir },
      'cannot keep the cursor key in the state directory; cursors will not outlive this process',
    );
    return undefined;
  }
}

/** The shared secret and the cluster the sources and the config ask for. */
export async function secretAndCluster(
  given: SecretSources,
  config: LoadedConfig | undefined,
  logger: Logger,
): Promise<{ secret?: string; cluster?: Cluster }> {
  const redis = given.redis !== undefined ? { url: given.redis } : config?.server.redis;
  const secretGiven =
    given.secretFile !== undefined ||
    (given.env !== undefined && given.env !== '') ||
    config?.server.secret !== undefined;
  if (!secretGiven && redis === undefined) return {};
  const { redisOptions, requireSecret, resolveSecret } = await import('../cluster/options.js');
  const secret = resolveSecret({
    file: given.secretFile,
    env: given.env,
    config: config?.server.secret,
  });
  if (redis === undefined) return definedProps({ secret });
  const parsed = redisOptions.safeParse(redis);
  if (!parsed.success)
    throw new ConfigError(
      given.redis !== undefined ? '--redis' : 'server.redis',
      parsed.error.issues.map((i) => i.message).join('; '),
    );
  requireSecret(secret);
  const { createCluster } = await import('../cluster/index.js');
  return { secret: secret!, cluster: createCluster({ ...parsed.data, secret: secret!, logger }) };
}
