/**
 * The git provider's options, as a zod schema: the config file's `type: git` source extends it, and
 * the factory parses with it, so a bad value fails the same way from the config, the CLI and code.
 */
import { z } from 'zod';
import { wholeNumber } from '../utils/options.js';

/** Default read cap: 7 MiB, as the files provider (its base64 still fits a 10 MiB stdio message). */
export const DEFAULT_MAX_READ_BYTES = 7 * 1024 * 1024;
/** How often watched refs are checked while anything is subscribed, ms. */
export const DEFAULT_POLL_INTERVAL_MS = 500;
/** Commits a history view returns when the URI does not say (`?limit=`). */
export const DEFAULT_LOG_LIMIT = 20;
/** Most commits a history view may return. */
export const DEFAULT_MAX_LOG_ENTRIES = 500;
/** Longest a git command may run, ms. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 30_000;

/**
 * A repository name, used as the URI authority (`git://<name>/…`): letters, digits, `.`, `_` and `-`,
 * starting with a letter or digit, so it survives URI normalisation unchanged.
 */
export const REPOSITORY_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

export const gitSourceOptions = z
  .strictObject({
    path: z
      .string()
      .min(1)
      .meta({ description: 'The repository: a working tree or a bare repository directory.' }),
    name: z
      .string()
      .regex(
        REPOSITORY_NAME,
        'letters, digits, ".", "_" and "-", starting with a letter or digit (at most 63)',
      )
      .optional()
      .meta({
        description:
          "The name in URIs (git://NAME/…). Default: the directory's base name, with other characters replaced by '-'.",
      }),
    branch: z.string().min(1).optional().meta({
      description:
        'The branch resources/list shows. Default: the branch HEAD points at (HEAD itself when detached).',
    }),
    maxReadBytes: wholeNumber(1, 2 ** 31 - 1)
      .optional()
      .meta({
        description:
          'Largest blob one read returns, and the bound of a commit diff or history, in bytes. Default: 7340032 (7 MiB).',
      }),
    pollIntervalMs: wholeNumber(10, 3_600_000)
      .optional()
      .meta({
        description: `How often watched refs are checked while anything is subscribed, ms. Default: ${DEFAULT_POLL_INTERVAL_MS}.`,
      }),
    maxLogEntries: wholeNumber(1, 10_000)
      .optional()
      .meta({
        description: `Most commits a history view returns (?limit= above it is refused). Default: ${DEFAULT_MAX_LOG_ENTRIES}.`,
      }),
    timeoutMs: wholeNumber(100, 600_000)
      .optional()
      .meta({
        description: `Longest one git command may run, ms. Default: ${DEFAULT_COMMAND_TIMEOUT_MS}.`,
      }),
  })
  .meta({ description: 'A git repository served as git:// resources.' });

/** The options as written (defaults not applied). */
export type GitSourceOptions = z.input<typeof gitSourceOptions>;
