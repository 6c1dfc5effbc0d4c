/**
 * Cluster mode's options (`server.redis`, `server.secret` in reservoir.yaml; `--redis`,
 * `--secret-file`, `RESERVOIR_SECRET`), in zod, and the rule that finds the shared secret. Kept
 * apart from the cluster itself, so the config schema loads no Redis client.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError } from '../core/errors.js';

/** Shortest shared secret accepted, in bytes (the HMAC keys it feeds need 32). */
export const MIN_SECRET_BYTES = 32;

export const redisOptions = z.strictObject({
  /** `redis://[user:password@]host:port[/db]` or `rediss://…` (TLS). */
  url: z.string().refine((value) => /^rediss?:\/\/[^\s]+$/.test(value) && URL.canParse(value), {
    error: 'expected a redis:// or rediss:// URL, e.g. redis://:password@10.0.0.5:6379/0',
  }),
  /** Prefix of every key and channel, so several services can share one Redis. @default 'reservoir:' */
  keyPrefix: z.string().min(1).max(100).optional(),
  /**
   * Longest any one Redis command may take, ms. A command that takes longer marks Redis degraded: the
   * instance stops asking it (limits count in memory, sessions stay local) until it answers again.
   * @default 500
   */
  timeoutMs: z.int().min(10).max(60_000).optional(),
});

export type RedisOptions = z.input<typeof redisOptions>;

export const DEFAULT_KEY_PREFIX = 'reservoir:';

/** How long a Redis command may take before Redis counts as hung (`timeoutMs`). */
export const DEFAULT_REDIS_TIMEOUT_MS = 500;

/** How to make a secret, said wherever one is missing or too short. */
export const SECRET_HOWTO =
  'make one with `reservoir token` (or `openssl rand -base64 48`) and give every instance the same value: RESERVOIR_SECRET=…, --secret-file PATH, or server.secret in the config';

/**
 * The shared secret: `--secret-file` first, then `RESERVOIR_SECRET`, then `server.secret`.
 * Undefined when none is given; ConfigError when the one given is unreadable or too short.
 */
export function resolveSecret(from: {
  file?: string | undefined;
  env?: string | undefined;
  config?: string | undefined;
}): string | undefined {
  let secret: string | undefined;
  let where: string;
  if (from.file !== undefined) {
    where = '--secret-file';
    try {
      secret = readFileSync(from.file, 'utf8').trim();
    } catch (error) {
      throw new ConfigError(
        where,
        `cannot read ${from.file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      );
    }
  } else if (from.env !== undefined && from.env !== '') {
    where = 'RESERVOIR_SECRET';
    secret = from.env.trim();
  } else if (from.config !== undefined) {
    where = 'server.secret';
    secret = from.config.trim();
  } else {
    return undefined;
  }
  const bytes = Buffer.byteLength(secret, 'utf8');
  if (bytes < MIN_SECRET_BYTES)
    throw new ConfigError(
      where,
      `the secret is ${bytes} bytes; at least ${MIN_SECRET_BYTES} are needed: ${SECRET_HOWTO}`,
      { limit: MIN_SECRET_BYTES },
    );
  return secret;
}

/** Cluster mode refuses to start without a shared secret: cursors and request state minted by one instance must be honoured by the others. */
export function requireSecret(secret: string | undefined): string {
  if (secret === undefined)
    throw new ConfigError(
      'server.secret',
      `cluster mode (--redis / server.redis) needs a secret shared by every instance: ${SECRET_HOWTO}`,
    );
  return secret;
}
