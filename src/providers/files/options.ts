/**
 * The files source's options as the config file writes them (`type: files` is added by the
 * catalog). The command line may override most of them; see config/merge.ts.
 */
import { z } from 'zod';
import { strict, wholeNumber } from '../utils/options.js';

export const filesSourceOptions = strict(
  {
    root: z.string().min(1).meta({
      description:
        "The directory to serve; a relative path is resolved against the config file's directory.",
    }),
    gitignore: z
      .boolean()
      .optional()
      .meta({ description: 'Honour .gitignore files. Default: true.' }),
    includeGitDir: z
      .boolean()
      .optional()
      .meta({ description: 'Serve the contents of .git directories. Default: false.' }),
    exclude: z
      .array(z.string())
      .optional()
      .meta({ description: 'Paths to leave out, gitignore syntax, relative to the root.' }),
    serveSecrets: z.boolean().optional().meta({
      description:
        'Serve files that hold secrets (.env, private keys, .npmrc, .netrc, cloud credentials; see the files provider docs). Default: false (skipped everywhere, read as missing).',
    }),
    secretPatterns: z.array(z.string()).optional().meta({
      description:
        'Patterns added to the list of secret files, gitignore syntax, matched case-insensitively: a pattern skips more, a !pattern serves a name the defaults skip (e.g. !*.pem).',
    }),
    maxReadBytes: wholeNumber(1)
      .optional()
      .meta({ description: 'Largest file one read returns, in bytes. Default: 7340032 (7 MiB).' }),
    watch: z.enum(['native', 'poll']).optional().meta({
      description:
        'Change detection: native OS watching (falls back to polling) or polling. Default: native.',
    }),
    allowHardlinks: z.boolean().optional().meta({
      description:
        'Serve regular files with more than one hard link (one may be an inode outside the root). Default: false (refused, like missing files).',
    }),
  },
  'A files source.',
);
