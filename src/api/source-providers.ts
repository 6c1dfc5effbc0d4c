/**
 * The source types: files, git, SQL, HTTP APIs and S3, each a provider factory with its options.
 * Re-exported by src/index.ts.
 */

/**
 * The files provider: a local directory tree as `file://` resources.
 *
 * @example
 * ```ts
 * const docs = filesProvider({ root: './docs', exclude: ['*.tmp'], maxReadBytes: 1 << 20 });
 * ```
 */
export { filesProvider, DEFAULT_MAX_READ_BYTES } from '../providers/files/index.js';
export { DEFAULT_SECRET_PATTERNS } from '../providers/files/secrets.js';
export type { FilesOptions, FilesProvider, DirectoryChild } from '../providers/files/index.js';
export type { WatchOptions } from '../providers/files/watch.js';

/**
 * The git provider: a repository's files at any ref as `git://<repo>/<ref>/<path>`, with history and
 * commit views, read through one long-lived `git cat-file` process.
 *
 * @example
 * ```ts
 * createReservoir({ providers: [gitProvider({ path: '/srv/repo', branch: 'main' })] });
 * ```
 */
export { gitProvider } from '../providers/git/index.js';
export type { GitOptions, GitProvider } from '../providers/git/index.js';

/**
 * The SQL provider: SQLite files and PostgreSQL databases as `db://<name>/…` (schemas, keyset-paged
 * rows, named queries), and an opt-in read-only `sql_query` tool.
 *
 * @example
 * ```ts
 * const db = sqlProvider({ url: process.env.DATABASE_URL, name: 'app', queryTool: true });
 * createReservoir({ providers: [db], tools: [sqlQueryTool(db)] });
 * ```
 */
export { sqlProvider } from '../providers/sql/index.js';
export { sqlQueryTool } from '../providers/sql/tool.js';
export type { SqlOptions, SqlProvider } from '../providers/sql/index.js';

/**
 * The HTTP API provider: upstream endpoints as `api://<name>/…` resources and templates, with
 * conditional caching, change polling and SSRF protection.
 *
 * @example
 * ```ts
 * httpProvider({ name: 'status', baseUrl: 'https://status.example.com/api/', endpoints: [{ name: 'summary', uri: 'summary', upstream: 'summary.json' }] });
 * ```
 */
export { httpProvider } from '../providers/http/index.js';
export type { HttpProviderOptions, HttpProvider } from '../providers/http/index.js';

/**
 * The S3 provider: a bucket (or a prefix of it) of AWS S3 or an S3-compatible store as
 * `s3://<bucket>/<key>` resources, polled for changes. The AWS SDK loads at the first request.
 *
 * @example
 * ```ts
 * createReservoir({ providers: [s3Provider({ bucket: 'docs', prefix: 'handbook/', region: 'eu-west-1' })] });
 * ```
 */
export { s3Provider } from '../providers/s3/index.js';
export type { S3Options, S3Provider } from '../providers/s3/index.js';
