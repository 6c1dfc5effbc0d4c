/**
 * The config file's schema, in zod: the one description that validates `reservoir.yaml`, types
 * the loader's output and generates `schema/reservoir.schema.json` for editors. Every object is
 * strict (a typo is an error, never silently ignored). Sources are a union discriminated on
 * `type`, so `git`, `sql` and `http` sources slot in beside `files`.
 */
import { redisOptions } from '../cluster/options.js';
import { z } from 'zod';
import { OPERATIONS, PRINCIPAL_PATTERN, principalProblem } from '../core/access.js';
import { MAX_PAGE_SIZE } from '../core/registry.js';
import { authOptions } from '../http/auth-options.js';
import { sessionLimitOptions } from '../http/session-options.js';
import { auditOptions, concurrencyOptions, rateLimitOptions } from '../policy/index.js';
import { gitSourceOptions } from '../providers/git/options.js';
import { httpSourceOptions } from '../providers/http/options.js';
import { sqlSourceOptions } from '../providers/sql/options.js';
import { LOG_LEVELS } from '../core/log.js';

/** A strict object whose unknown keys are reported with the keys it does accept. */
function strict<Shape extends z.core.$ZodLooseShape>(shape: Shape, description: string) {
  const known = Object.keys(shape);
  return z
    .strictObject(shape, {
      error: (issue) => (issue.code === 'unrecognized_keys' ? { message: `${UNKNOWN_KEYS_TAG}${known.join(',')}` } : undefined),
    })
    .meta({ description });
}

/** Marks an unknown-keys message so the formatter can name the accepted keys (see messages.ts). */
export const UNKNOWN_KEYS_TAG = '\u0000known:';

const wholeNumber = (min: number, max?: number) => {
  const n = z.int({ error: (issue) => (issue.code === 'invalid_type' ? 'expected a whole number' : undefined) }).min(min);
  return max === undefined ? n : n.max(max);
};

const FilesSourceSchema = strict(
  {
    type: z.literal('files').meta({ description: 'A local directory tree served as file:// resources.' }),
    root: z.string().min(1).meta({ description: 'The directory to serve; a relative path is resolved against the config file\'s directory.' }),
    gitignore: z.boolean().optional().meta({ description: 'Honour .gitignore files. Default: true.' }),
    includeGitDir: z.boolean().optional().meta({ description: 'Serve the contents of .git directories. Default: false.' }),
    exclude: z.array(z.string()).optional().meta({ description: 'Paths to leave out, gitignore syntax, relative to the root.' }),
    maxReadBytes: wholeNumber(1).optional().meta({ description: 'Largest file one read returns, in bytes. Default: 7340032 (7 MiB).' }),
    watch: z.enum(['native', 'poll']).optional().meta({ description: 'Change detection: native OS watching (falls back to polling) or polling. Default: native.' }),
    allowHardlinks: z.boolean().optional().meta({
      description: 'Serve regular files with more than one hard link (one may be an inode outside the root). Default: false (refused, like missing files).',
    }),
  },
  'A files source.',
);

const GitSourceSchema = gitSourceOptions.safeExtend({
  type: z.literal('git').meta({ description: 'A git repository served as git:// resources (see docs/providers/git.md).' }),
});

const HttpSourceSchema = httpSourceOptions.safeExtend({
  type: z.literal('http').meta({ description: 'Upstream HTTP endpoints served as api:// resources (see docs/providers/http.md).' }),
});

const SqlSourceSchema = sqlSourceOptions.safeExtend({
  type: z.literal('sql').meta({ description: 'A SQLite file or PostgreSQL database served as db:// resources (see docs/providers/sql.md).' }),
});

export const SourceSchema = z
  .discriminatedUnion('type', [FilesSourceSchema, GitSourceSchema, HttpSourceSchema, SqlSourceSchema])
  .meta({ description: 'A source of resources, chosen by `type`.' });

const HttpSchema = strict(
  {
    host: z.string().min(1).optional().meta({ description: 'Address to bind. Default: 127.0.0.1.' }),
    port: wholeNumber(0, 65535).optional().meta({ description: 'Port to bind (0 picks a free one). Default: 7337.' }),
    allowedHosts: z.array(z.string().min(1)).optional().meta({ description: 'Host/Origin names accepted besides localhost (needed when binding a non-loopback address).' }),
    maxBodyBytes: wholeNumber(1).optional().meta({ description: 'Largest HTTP request body, in bytes. Default: 4194304 (4 MiB).' }),
    auth: authOptions.optional().meta({ description: 'Who may connect: static bearer tokens, OAuth access tokens, anonymous access. See docs/auth.md.' }),
    tls: strict(
      {
        cert: z.string().min(1).meta({ description: 'Path of the PEM certificate (chain); relative to the config file\'s directory.' }),
        key: z.string().min(1).meta({ description: 'Path of the PEM private key; relative to the config file\'s directory.' }),
      },
      'Serve HTTPS with these files; both are read again when either changes, without a restart.',
    ).optional(),
    sessions: sessionLimitOptions
      .optional()
      .meta({ description: '2025-era sessions per principal (default 100; over it, the least recently used one without an open stream is closed) and the initialize rate per principal, per address for anonymous callers (default 5/s, burst 50).' }),
    anonymous: z
      .boolean()
      .optional()
      .meta({ description: 'Without auth, serve anonymous requests on a non-loopback address too. Default: false (loopback only).' }),
  },
  'Serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio.',
);

const AccessRuleSchema = strict(
  {
    principals: z
      .array(
        z
          .string()
          .min(1)
          .superRefine((entry, ctx) => {
            const problem = principalProblem(entry);
            if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
          })
          .meta({ pattern: PRINCIPAL_PATTERN }),
      )
      .optional()
      .meta({
        description:
          'Principals the rule applies to, each with its kind: token:NAME (a static token), oauth:SUBJECT (an OAuth sub), token:* or oauth:* (any of that kind), anonymous, or * (anyone). A bare id is refused.',
      }),
    scopes: z.array(z.string().min(1)).optional().meta({ description: 'The rule applies to principals holding any of these scopes.' }),
    operations: z.array(z.enum(OPERATIONS)).optional().meta({ description: 'Operations covered. Default: all.' }),
    allow: z.array(z.string().min(1)).optional().meta({ description: 'URI glob patterns granted, e.g. file:///srv/docs/** (prompts and tools: prompt:NAME, tool:NAME).' }),
    deny: z.array(z.string().min(1)).optional().meta({ description: 'URI glob patterns refused; a deny wins over any allow.' }),
  },
  'One access rule.',
);

const AccessSchema = strict(
  {
    default: z.enum(['allow', 'deny']).optional().meta({ description: 'What applies when no rule matches. Default: deny.' }),
    rules: z.array(AccessRuleSchema).meta({ description: 'Rules, each applying to principals by id or scope.' }),
  },
  'Who may see what: rules over URIs and operations, applied on every route to a resource. The local (stdio) user is exempt.',
);

const ServerSchema = strict(
  {
    pageSize: wholeNumber(1, MAX_PAGE_SIZE).optional().meta({ description: `Resources per list page, 1-${MAX_PAGE_SIZE}. Default: 1000.` }),
    logLevel: z.enum(LOG_LEVELS as [string, ...string[]]).optional().meta({ description: 'Log level (logs go to stderr). Default: info.' }),
    instructions: z.string().optional().meta({ description: 'Instructions shown to clients when they connect.' }),
    http: HttpSchema.optional(),
    limits: strict(
      {
        rateLimit: rateLimitOptions.optional().meta({ description: 'Per-principal requests and bytes per second, with bursts.' }),
        concurrency: concurrencyOptions.optional().meta({ description: 'Per-principal concurrent requests and listen streams.' }),
        deadlineMs: wholeNumber(1).optional().meta({ description: 'Deadline of every operation, ms. Default: 30000.' }),
      },
      'Limits per principal (see docs/operations.md).',
    ).optional(),
    audit: auditOptions.optional().meta({ description: 'The audit log: one JSON line per operation, to stderr or a rotating file.' }),
    redis: redisOptions
      .optional()
      .meta({ description: 'Cluster mode: several instances behind a load balancer share this Redis (url: redis:// or rediss://, keyPrefix). Needs a shared secret. See docs/cluster.md.' }),
    secret: z
      .string()
      .optional()
      .meta({ description: 'The secret every instance of one service shares (at least 32 bytes; make one with `reservoir token`): it signs cursors and request state. RESERVOIR_SECRET and --secret-file override it.' }),
  },
  'Server options.',
);

const CompleteSchema = z
  .union([
    z.literal('path').meta({ description: 'Complete paths of served files, relative to the config file\'s directory.' }),
    z.array(z.string()).meta({ description: 'A fixed list of values, offered by prefix.' }),
  ])
  .meta({ description: 'How clients complete this argument: `path`, or a list of values.' });

const ArgumentSchema = strict(
  {
    name: z.string().min(1).meta({ description: 'The argument name, used as {{name}} in messages.' }),
    title: z.string().optional(),
    description: z.string().optional(),
    required: z.boolean().optional().meta({ description: 'Whether prompts/get must supply it. Default: false.' }),
    complete: CompleteSchema.optional(),
  },
  'A prompt argument.',
);

const MessageSchema = strict(
  {
    role: z.enum(['user', 'assistant']).meta({ description: 'Who speaks this message.' }),
    text: z.string().optional().meta({ description: 'Text, with {{argument}} replaced by argument values. Exactly one of text or resource.' }),
    resource: z
      .string()
      .min(1)
      .optional()
      .meta({ description: 'A resource to embed: a URI, or a path relative to the config file; {{argument}} is replaced. Exactly one of text or resource.' }),
  },
  'A prompt message: text, or an embedded resource.',
);

const PromptSchema = strict(
  {
    name: z.string().min(1).meta({ description: 'The prompt name clients ask for.' }),
    title: z.string().optional(),
    description: z.string().optional(),
    arguments: z.array(ArgumentSchema).optional(),
    messages: z.array(MessageSchema).min(1, { error: 'expected at least one message, got an empty list' }),
  },
  'A prompt template.',
);

export const ConfigSchema = strict(
  {
    $schema: z.string().optional().meta({ description: 'The JSON Schema this file follows (for editors; ignored by Reservoir).' }),
    sources: z.array(SourceSchema).min(1, { error: 'expected at least one source, got an empty list' }).meta({ description: 'What to serve, in listing order.' }),
    server: ServerSchema.optional(),
    prompts: z.array(PromptSchema).optional().meta({ description: 'Prompt templates offered to clients.' }),
    access: AccessSchema.optional(),
  },
  'Reservoir configuration (reservoir.yaml).',
);

export type ConfigInput = z.input<typeof ConfigSchema>;
export type ConfigData = z.output<typeof ConfigSchema>;
export type SourceConfig = z.output<typeof SourceSchema>;
export type FilesSourceConfig = z.output<typeof FilesSourceSchema>;
export type GitSourceConfig = z.output<typeof GitSourceSchema>;
export type HttpSourceConfig = z.output<typeof HttpSourceSchema>;
export type SqlSourceConfig = z.output<typeof SqlSourceSchema>;
/** A source the files-specific merging does not handle; mounted as configured. */
export type OtherSourceConfig = GitSourceConfig | HttpSourceConfig | SqlSourceConfig;
export type ServerConfig = z.output<typeof ServerSchema>;
export type AccessConfig = z.output<typeof AccessSchema>;
export type HttpConfig = z.output<typeof HttpSchema>;
export type PromptConfig = z.output<typeof PromptSchema>;
export type PromptArgumentConfig = z.output<typeof ArgumentSchema>;
export type PromptMessageConfig = z.output<typeof MessageSchema>;
