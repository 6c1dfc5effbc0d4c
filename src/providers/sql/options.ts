/**
 * The SQL provider's options, as a zod schema: the config file's `type: sql` source extends it, and
 * the factory parses with it, so a bad value fails the same way from the config, the CLI and code.
 * The checks across fields (exactly one of `path` and `url`, PostgreSQL-only keys, pageRows ≤
 * maxRows) are a refinement of the same schema, so `reservoir check`, `serve` and code agree
 * (`safeExtend` keeps the refinement when the config schema adds `type`).
 */
import { z } from 'zod';
import { passableName, wholeNumber } from '../utils/options.js';

/** Rows a table page holds when the URI does not say (`?limit=`). */
export const DEFAULT_PAGE_ROWS = 100;
/** Most rows one page, named query or `sql_query` call returns. */
export const DEFAULT_MAX_ROWS = 1000;
/** Longest one statement may run, ms. */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 5000;
/** How often the change fingerprint is taken while anything is watched, ms. */
export const DEFAULT_POLL_INTERVAL_MS = 1000;
/** Largest encoded result of a named query or `sql_query` call, bytes. */
export const DEFAULT_MAX_RESULT_BYTES = 4 * 1024 * 1024;

/** Most PostgreSQL or MySQL connections one source holds for `sql_query` calls (and, apart, for reads). */
export const DEFAULT_POOL_MAX = 4;

/** A source name, used as the URI authority (`db://<name>/…`). */
export const SOURCE_NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;
/** A named query or parameter name: safe in a URI path segment and a query key, unchanged. */
export const QUERY_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,62}$/;

export const PARAMETER_TYPES = ['string', 'number', 'integer', 'boolean', 'date'] as const;
export type ParameterType = (typeof PARAMETER_TYPES)[number];

const scalar = z.union([z.string(), z.number(), z.boolean()]);

export const queryParameterSchema = z
  .strictObject({
    name: passableName(
      z.string().regex(QUERY_NAME, 'letters, digits, "_" and "-", starting with a letter or "_"'),
      'the name of a query parameter',
    ).meta({ description: 'The name in URIs (?NAME=value).' }),
    type: z.enum(PARAMETER_TYPES).optional().meta({
      description:
        'How the value is checked and bound: string, number, integer, boolean or date (ISO 8601). Default: string.',
    }),
    required: z.boolean().optional().meta({
      description: 'Whether a read must supply it. Default: true unless a default is given.',
    }),
    default: scalar.optional().meta({ description: 'The value bound when the URI omits it.' }),
    description: z.string().optional(),
    values: z
      .array(scalar)
      .min(1)
      .optional()
      .meta({ description: 'The only values accepted; also what completion offers.' }),
    complete: z
      .string()
      .regex(/^[^.]+\.[^.]+$/, 'expected TABLE.COLUMN')
      .optional()
      .meta({
        description:
          'Complete this parameter from the distinct values of TABLE.COLUMN (a served table).',
      }),
  })
  .meta({
    description:
      'One bound parameter of a named query, in placeholder order ($1, $2 … on PostgreSQL; ?1, ?2 … or ? on SQLite).',
  });

export const namedQuerySchema = z
  .strictObject({
    sql: z.string().min(1).meta({
      description: 'One read-only statement; parameters only as placeholders, never spliced in.',
    }),
    description: z.string().optional(),
    params: z
      .array(queryParameterSchema)
      .optional()
      .meta({ description: 'The parameters, in placeholder order.' }),
  })
  .meta({ description: 'A named query, served at db://NAME/queries/QUERY{?params}.' });

export const sqlSourceOptions = z
  .strictObject({
    path: z
      .string()
      .min(1)
      .optional()
      .meta({ description: 'A SQLite database file, opened read-only.' }),
    url: z
      .string()
      .regex(
        /^(postgres(ql)?|mysql|mariadb):\/\//,
        'expected a postgres://, postgresql://, mysql:// or mariadb:// URL',
      )
      .optional()
      .meta({
        description:
          'A PostgreSQL (postgres://) or MySQL / MariaDB (mysql://, mariadb://) connection URL naming the database. Connect as a user that may only read.',
      }),
    name: z
      .string()
      .regex(
        SOURCE_NAME,
        'lower-case letters, digits, ".", "_" and "-", starting with a letter or digit (at most 63)',
      )
      .optional()
      .meta({
        description:
          "The name in URIs (db://NAME/…). Default: the SQLite file's base name or the URL's database name, lower-cased, other characters replaced by '-'.",
      }),
    schema: z.string().min(1).optional().meta({
      description:
        'PostgreSQL only: the schema whose tables are served. Default: public. (On MySQL the URL names the database.)',
    }),
    pageRows: wholeNumber(1, 10_000)
      .optional()
      .meta({
        description: `Rows per table page when the URI does not say. Default: ${DEFAULT_PAGE_ROWS}.`,
      }),
    maxRows: wholeNumber(1, 10_000)
      .optional()
      .meta({
        description: `Most rows one page, query or sql_query call returns. Default: ${DEFAULT_MAX_ROWS}.`,
      }),
    maxResultBytes: wholeNumber(1024, 2 ** 31 - 1)
      .optional()
      .meta({
        description: `Largest JSON result of a query or sql_query call, bytes. Default: ${DEFAULT_MAX_RESULT_BYTES}.`,
      }),
    statementTimeoutMs: wholeNumber(10, 600_000)
      .optional()
      .meta({
        description: `Longest one statement may run, ms. Default: ${DEFAULT_STATEMENT_TIMEOUT_MS}.`,
      }),
    pollIntervalMs: wholeNumber(50, 3_600_000)
      .optional()
      .meta({
        description: `How often changes are looked for while anything is watched, ms. Default: ${DEFAULT_POLL_INTERVAL_MS}.`,
      }),
    notifyChannel: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, 'a plain identifier')
      .optional()
      .meta({
        description:
          'PostgreSQL only: LISTEN on this channel for changes instead of polling (payload: a table name, or empty for any).',
      }),
    queries: z
      .record(z.string().regex(QUERY_NAME), namedQuerySchema)
      .optional()
      .meta({ description: 'Named queries, served as resource templates.' }),
    queryTool: z.boolean().optional().meta({
      description: 'Offer the read-only sql_query_NAME tool for this source. Default: false.',
    }),
    allowPrivilegedRole: z.boolean().optional().meta({
      description:
        'Let sql_query run as a role that may write: on PostgreSQL a superuser, a role that may read server files, run programs or signal backends, or one with write grants; on MySQL / MariaDB a user granted anything beyond SELECT and SHOW VIEW. Default: false.',
    }),
    pool: z
      .strictObject({
        max: wholeNumber(1, 100)
          .optional()
          .meta({
            description: `Most connections open at once for sql_query calls (reads have a pool of the same size). Default: ${DEFAULT_POOL_MAX}.`,
          }),
      })
      .optional()
      .meta({
        description:
          'PostgreSQL and MySQL / MariaDB: the connection pools. Calls beyond the cap wait for a free connection (within their deadline).',
      }),
  })
  .superRefine((options, ctx) => {
    if ((options.path === undefined) === (options.url === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: [options.path === undefined ? 'path' : 'url'],
        message: 'give exactly one of path (SQLite) and url (PostgreSQL, MySQL or MariaDB)',
      });
    }
    if (options.url !== undefined && urlKind(options.url) === 'mysql') {
      for (const key of ['schema', 'notifyChannel'] as const) {
        if (options[key] !== undefined)
          ctx.addIssue({
            code: 'custom',
            path: [key],
            message:
              'is for PostgreSQL sources only (this source is MySQL / MariaDB: its URL names the database)',
          });
      }
    }
    if (options.path !== undefined) {
      for (const key of ['schema', 'notifyChannel', 'pool'] as const) {
        if (options[key] !== undefined)
          ctx.addIssue({
            code: 'custom',
            path: [key],
            message: 'is for PostgreSQL sources only (this source has a path: SQLite)',
          });
      }
    }
    const maxRows = options.maxRows ?? DEFAULT_MAX_ROWS;
    if (options.pageRows !== undefined && options.pageRows > maxRows) {
      ctx.addIssue({
        code: 'custom',
        path: ['pageRows'],
        message: `must not exceed maxRows (${maxRows})`,
      });
    }
  })
  .meta({
    description:
      'A SQL database (SQLite, PostgreSQL, MySQL or MariaDB) served read-only as db:// resources.',
  });

/** Which server a connection URL names: postgres:// and postgresql:// PostgreSQL, mysql:// and mariadb:// MySQL or MariaDB. */
export function urlKind(url: string): 'postgres' | 'mysql' {
  return /^(mysql|mariadb):/i.test(url) ? 'mysql' : 'postgres';
}

/** The options as written (defaults not applied). */
export type SqlSourceOptions = z.input<typeof sqlSourceOptions>;
export type NamedQuery = z.output<typeof namedQuerySchema>;
export type QueryParameter = z.output<typeof queryParameterSchema>;
