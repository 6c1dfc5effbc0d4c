/**
 * The config file's schema, in zod: the one description that validates `reservoir.yaml`, types
 * the loader's output and generates `schema/reservoir.schema.json` for editors. Every object is
 * strict (a typo is an error, never silently ignored). Sources are a union discriminated on
 * `type`, generated from the provider catalog (src/providers/catalog.ts): one row per type.
 */
import { redisOptions } from '../cluster/options.js';
import { z } from 'zod';
import { ConfigError } from '../core/errors.js';
import { MAX_PAGE_SIZE } from '../core/registry.js';
import { authOptions } from '../http/auth-options.js';
import { sessionLimitOptions } from '../http/session-options.js';
import { tlsServerSettings } from '../http/tls-policy.js';
import { auditOptions, concurrencyOptions, rateLimitOptions } from '../policy/index.js';
import { blobCapRule } from '../core/blob-caps.js';
import { ToolsSchema } from './tools.js';
import {
  SOURCE_CATALOG,
  skillsSourceSchema,
  sourceSchema,
  type SourceConfig,
  type SourceConfigOf,
} from '../providers/catalog.js';
import { strict, wholeNumber } from '../providers/utils/options.js';
import { HintsSchema, presentationOptions } from './hints.js';
import { LOG_LEVELS } from '../core/log.js';
import { AccessSchema } from './access-schema.js';
import type { ArgumentSchema, MessageSchema } from './prompt-schema.js';
import { PromptSchema } from './prompt-schema.js';
import { SEGMENTER_LANGUAGES } from '../search/segment.js';

export { UNKNOWN_KEYS_TAG } from '../providers/utils/options.js';

/**
 * One source: a union discriminated on `type`, generated from the provider catalog. The rows load
 * their option schemas lazily, so this module waits for them once, when a config file is loaded.
 */
export const SourceSchema = (await sourceSchema()).meta({
  description: 'A source of resources, chosen by `type`.',
});

const HttpSchema = strict(
  {
    host: z
      .string()
      .min(1)
      .optional()
      .meta({ description: 'Address to bind. Default: 127.0.0.1.' }),
    port: wholeNumber(0, 65535)
      .optional()
      .meta({ description: 'Port to bind (0 picks a free one). Default: 7337.' }),
    allowedHosts: z.array(z.string().min(1)).optional().meta({
      description:
        'Host/Origin names accepted besides localhost (needed when binding a non-loopback address).',
    }),
    maxBodyBytes: wholeNumber(1)
      .optional()
      .meta({ description: 'Largest HTTP request body, in bytes. Default: 4194304 (4 MiB).' }),
    auth: authOptions.optional().meta({
      description:
        'Who may connect: static bearer tokens, OAuth access tokens, anonymous access. See docs/auth.md.',
    }),
    tls: strict(
      {
        cert: z.string().min(1).meta({
          description:
            "Path of the PEM certificate (chain); relative to the config file's directory.",
        }),
        key: z.string().min(1).meta({
          description: "Path of the PEM private key; relative to the config file's directory.",
        }),
        ciphers: z.string().min(1).optional().meta({
          description:
            "Suites served, ':'-separated OpenSSL and TLS 1.3 names (checked at start). Default: TLS 1.3 suites and ECDHE with AES-GCM or ChaCha20-Poly1305.",
        }),
        minVersion: z
          .enum(['TLSv1.2', 'TLSv1.3'])
          .optional()
          .meta({ description: "Lowest TLS version served. Default: 'TLSv1.2'." }),
      },
      'Serve HTTPS with these files; both are read again when either changes, without a restart.',
    )
      .superRefine((tls, ctx) => {
        try {
          tlsServerSettings(tls);
        } catch (error) {
          if (!(error instanceof ConfigError)) throw error;
          ctx.addIssue({
            code: 'custom',
            path: [String(error.data['field']).split('.').at(-1)!],
            message: String(error.data['reason']),
          });
        }
      })
      .optional(),
    sessions: sessionLimitOptions.optional().meta({
      description:
        '2025-era sessions per principal (default 100; over it, the least recently used one without an open stream is closed) and the initialize rate per principal, per address for anonymous callers (default 5/s, burst 50).',
    }),
    anonymous: z.boolean().optional().meta({
      description:
        'Without auth, serve anonymous requests on a non-loopback address too. Default: false (loopback only).',
    }),
    ui: z.boolean().optional().meta({
      description:
        "Serve the explorer (a browser page over this server's own /mcp) at /ui/. Default: true.",
    }),
    sse: z.boolean().optional().meta({
      description:
        'Serve the 2024-11-05 HTTP+SSE transport (GET /sse, POST /messages?sessionId=…) for clients that do not speak Streamable HTTP, with the same auth, limits and access as /mcp. Default: true.',
    }),
  },
  'Serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio.',
);

const ServerSchema = strict(
  {
    pageSize: wholeNumber(1, MAX_PAGE_SIZE)
      .optional()
      .meta({ description: `Resources per list page, 1-${MAX_PAGE_SIZE}. Default: 1000.` }),
    sourceListTimeoutMs: wholeNumber(1).optional().meta({
      description:
        'Time one source may spend on its part of a resources/list page, ms; past it the page goes on without that source. Default: 2000.',
    }),
    shutdownGraceMs: wholeNumber(0).optional().meta({
      description:
        'On SIGTERM/SIGINT (and the end of stdin), how long the server waits for the requests it already took to be answered before closing anyway, ms; new requests are refused meanwhile. Default: 10000.',
    }),
    memoryReducer: z
      .union([
        z.boolean(),
        strict(
          {
            quietMs: wholeNumber(1000).optional().meta({
              description:
                'How long the server must be quiet (no request in flight or begun) before memory is given back, ms. Default: 6000.',
            }),
          },
          'When the memory is given back.',
        ),
      ])
      .optional()
      .meta({
        description:
          'Give back the memory a burst of work left (the young generation, freed heap pages) once the server is quiet after it: one garbage collection, never with a request in flight. Default: true.',
      }),
    logLevel: z
      .enum(LOG_LEVELS as [string, ...string[]])
      .optional()
      .meta({ description: 'Log level (logs go to stderr). Default: info.' }),
    instructions: z
      .string()
      .optional()
      .meta({ description: 'Instructions shown to clients when they connect.' }),
    ...presentationOptions,
    http: HttpSchema.optional(),
    limits: strict(
      {
        rateLimit: rateLimitOptions
          .optional()
          .meta({ description: 'Per-principal requests and bytes per second, with bursts.' }),
        concurrency: concurrencyOptions
          .optional()
          .meta({ description: 'Per-principal concurrent requests and listen streams.' }),
        deadlineMs: wholeNumber(1)
          .optional()
          .meta({ description: 'Deadline of every operation, ms. Default: 30000.' }),
        blobCaps: z.array(blobCapRule).optional().meta({
          description:
            'Smaller caps on binary content for some principals or clients (by clientInfo), e.g. TS SDK ≤ 1.16 clients, which crash on blobs above ~2.7 MiB. The smallest that applies wins.',
        }),
      },
      'Limits per principal (see docs/operations.md).',
    ).optional(),
    audit: auditOptions.optional().meta({
      description: 'The audit log: one JSON line per operation, to stderr or a rotating file.',
    }),
    stateDir: z.string().min(1).optional().meta({
      description:
        "Where Reservoir keeps state across restarts (search indexes, the cursor key); relative to the config file's directory. Default: the platform's cache directory ($XDG_CACHE_HOME/reservoir or ~/.cache/reservoir on Linux).",
    }),
    redis: redisOptions.optional().meta({
      description:
        'Cluster mode: several instances behind a load balancer share this Redis (url: redis:// or rediss://, keyPrefix, timeoutMs: the longest one Redis command may take, default 500 ms). Needs a shared secret. See docs/cluster.md.',
    }),
    secret: z.string().optional().meta({
      description:
        'The secret every instance of one service shares (at least 32 bytes; make one with `reservoir token`): it signs cursors and request state. RESERVOIR_SECRET and --secret-file override it.',
    }),
  },
  'Server options.',
);

const SearchSchema = strict(
  {
    enabled: z.boolean().optional().meta({
      description:
        'Offer the search_resources tool over a full-text index of the sources. Default: true.',
    }),
    sources: z.array(z.string().min(1)).optional().meta({
      description:
        "The sources to index, by name (a files root's directory name, a git repository's name, a sql or http source's name in its URIs) or root URI. Default: every files and git source; name a sql or http source to index it too.",
    }),
    maxFileBytes: wholeNumber(1).optional().meta({
      description:
        'Largest text indexed per resource, in bytes; larger resources are found by name and path only. Default: 1048576 (1 MiB).',
    }),
    queryBudgetMs: wholeNumber(1).optional().meta({
      description:
        "How long one search's index queries may run in all, in milliseconds, before the search is stopped and answered with an error asking for a narrower query (a prefix found in most of a very large tree takes seconds to rank). Default: 10000.",
    }),
    languages: z.array(z.enum(SEGMENTER_LANGUAGES)).optional().meta({
      description:
        'Word segmenters for scripts written without spaces (zh: Chinese, ja: Japanese). Default: [zh, ja]; [] turns segmentation off.',
    }),
    postgres: strict(
      {
        url: z
          .string()
          .regex(/^postgres(ql)?:\/\//, { error: 'expected a postgres:// URL' })
          .meta({
            description:
              'The PostgreSQL to keep the index in, e.g. postgres://reservoir@db:5432/reservoir (a password may come from PGPASSWORD).',
          }),
        schema: z
          .string()
          .regex(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, {
            error: 'expected an SQL identifier (letters, digits, _)',
          })
          .optional()
          .meta({
            description:
              'The schema holding the index tables (created when missing). Default: reservoir_search.',
          }),
      },
      'Keep the index in PostgreSQL full-text search instead of a SQLite file of each instance: every instance given the same sources shares it, each source fed by one instance at a time (see docs/search.md).',
    ).optional(),
  },
  'Full-text search (the search_resources tool, `reservoir search`, `reservoir index`).',
);

const SkillsSchema = strict(
  {
    source: (await skillsSourceSchema()).meta({
      description:
        'Where the skills live: a files source (root), a git source (path, at its branch) or an s3 source (bucket, prefix; polled for changes). It is read for skills only, not mounted as resources.',
    }),
    path: z
      .string()
      .regex(/^(?!\/)(?!.*(?:^|\/)\.\.?(?:\/|$)).*$/, {
        error: 'expected a relative path inside the source, without . or .. segments',
      })
      .optional()
      .meta({
        description:
          "The folder under the source holding the skill folders, /-separated. Default: the source's root.",
      }),
    prefix: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]*(?:\/[a-z0-9][a-z0-9._-]*)*$/, {
        error:
          'expected lowercase letters, digits, ".", "_" and "-", in /-separated segments, e.g. acme or acme/data',
      })
      .optional()
      .meta({
        description:
          'Organisational prefix: acme serves skill://acme/<skill>/SKILL.md. Default: none (skill://<skill>/SKILL.md).',
      }),
    pageSize: wholeNumber(1, 1000).optional().meta({
      description:
        'Skills per skills/list page and children per directory page, 1-1000. Default: 100.',
    }),
    strict: z.boolean().optional().meta({
      description:
        'Treat every skill problem as an error: refuse to start, and keep the previous version of a folder an edit broke. Default: false (skip the skill, log a warning).',
    }),
    limits: strict(
      {
        files: wholeNumber(1)
          .optional()
          .meta({ description: 'Most files per skill. Default: 512 (SKILL_LIMITS).' }),
        bytes: wholeNumber(1)
          .optional()
          .meta({ description: 'Most bytes per skill. Default: 16777216 (16 MiB, SKILL_LIMITS).' }),
      },
      'Publication limits per skill; beyond them, a warning (an error under strict).',
    ).optional(),
  },
  'A catalog of Agent Skills served with the io.modelcontextprotocol/skills extension (skills/list, skills/get, skill:// resources).',
);

export const ConfigSchema = strict(
  {
    $schema: z.string().optional().meta({
      description: 'The JSON Schema this file follows (for editors; ignored by Reservoir).',
    }),
    sources: z
      .array(SourceSchema)
      .min(1, { error: 'expected at least one source, got an empty list' })
      .optional()
      .meta({ description: 'What to serve, in listing order. Required unless skills are given.' }),
    server: ServerSchema.optional(),
    prompts: z
      .array(PromptSchema)
      .optional()
      .meta({ description: 'Prompt templates offered to clients.' }),
    access: AccessSchema.optional(),
    hints: HintsSchema.optional(),
    search: SearchSchema.optional(),
    tools: ToolsSchema.optional(),
    skills: z.array(SkillsSchema).optional().meta({
      description: 'Agent Skills catalogs, each read from a source (see docs/skills.md).',
    }),
  },
  'Reservoir configuration (reservoir.yaml).',
);

export type ConfigInput = z.input<typeof ConfigSchema>;
export type ConfigData = z.output<typeof ConfigSchema>;
export type { SourceConfig };
/** The config of one source type, as validated. */
export type { SourceConfigOf };
export type FilesSourceConfig = SourceConfigOf<'files'>;
export type GitSourceConfig = SourceConfigOf<'git'>;
export type HttpSourceConfig = SourceConfigOf<'http'>;
export type SqlSourceConfig = SourceConfigOf<'sql'>;
/** A source the files-specific merging does not handle; mounted as configured. */
export type OtherSourceConfig = Exclude<SourceConfig, FilesSourceConfig>;
/** The source types, as the catalog lists them. */
export const SOURCE_TYPES = SOURCE_CATALOG.map((entry) => entry.type);
export type ServerConfig = z.output<typeof ServerSchema>;
export type AccessConfig = z.output<typeof AccessSchema>;
export type SearchConfig = z.output<typeof SearchSchema>;
export type SkillsConfig = z.output<typeof SkillsSchema>;
export type HttpConfig = z.output<typeof HttpSchema>;
export type PromptConfig = z.output<typeof PromptSchema>;
export type PromptArgumentConfig = z.output<typeof ArgumentSchema>;
export type PromptMessageConfig = z.output<typeof MessageSchema>;
