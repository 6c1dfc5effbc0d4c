/**
 * Reservoir's public library API. Named exports only; everything else is internal.
 *
 * @example
 * ```ts
 * import { createReservoir, filesProvider } from 'mcp-reservoir';
 *
 * const reservoir = createReservoir({ providers: [filesProvider({ root: './docs' })] });
 * const endpoint = await reservoir.listen({ port: 7337 }); // http://127.0.0.1:7337/mcp
 * // …or: reservoir.serveStdio();
 * ```
 */

/**
 * Creates a server from providers; serve it with `serveStdio()` and/or `listen()`.
 *
 * @example
 * ```ts
 * const reservoir = createReservoir({ providers: [filesProvider({ root: '/srv/docs' })], pageSize: 500 });
 * reservoir.serveStdio();
 * ```
 */
export { createReservoir, Reservoir } from './server/index.js';
export type { ReservoirOptions, StdioHandle } from './server/index.js';

/**
 * The files provider: a local directory tree as `file://` resources.
 *
 * @example
 * ```ts
 * const docs = filesProvider({ root: './docs', exclude: ['*.tmp'], maxReadBytes: 1 << 20 });
 * ```
 */
export { filesProvider, DEFAULT_MAX_READ_BYTES } from './providers/files/index.js';
export type { FilesOptions, DirectoryChild } from './providers/files/index.js';

/**
 * The mount table with merged, cursor-paged listing; usable on its own, without any transport.
 *
 * @example
 * ```ts
 * const registry = new Registry({ pageSize: 100 }).mount(filesProvider({ root: '.' }));
 * const page = await registry.listResources(undefined, { signal: AbortSignal.timeout(5000) });
 * ```
 */
export { Registry, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, DEFAULT_MAX_RESPONSE_BYTES } from './core/registry.js';
export type { RegistryOptions, ListPage } from './core/registry.js';

/**
 * The provider contract, for writing your own sources.
 *
 * @example
 * ```ts
 * const notes: Provider = {
 *   name: 'notes',
 *   root: 'notes://team/',
 *   async list() { return { items: [{ uri: 'notes://team/today', name: 'today', mimeType: 'text/plain' }] }; },
 *   async read(uri) {
 *     if (uri !== 'notes://team/today') throw new NotFoundError(uri);
 *     return { contents: [{ uri, mimeType: 'text/plain', text: 'Ship it.' }] };
 *   },
 * };
 * ```
 */
export type {
  Provider,
  ProviderFactory,
  ProviderPage,
  CallContext,
  ResourceInfo,
  ResourceContents,
  TextContents,
  BlobContents,
  ReadResult,
  ResourceTemplateInfo,
} from './core/types.js';

/**
 * Typed errors. Providers throw these; the server maps them to JSON-RPC codes (docs/errors.md).
 *
 * @example
 * ```ts
 * throw new TooLargeError(uri, size, limit);
 * ```
 */
export {
  ReservoirError,
  NotFoundError,
  InvalidUriError,
  InvalidCursorError,
  InvalidArgumentError,
  TooLargeError,
  UnavailableError,
  ConfigError,
  ERROR_CODES,
  isReservoirError,
} from './core/errors.js';
export type { ErrorCode, ErrorData } from './core/errors.js';

/**
 * Logging: pass any logger with error/warn/info/debug (pino fits), or use `createLogger`.
 *
 * @example
 * ```ts
 * createReservoir({ providers, logger: createLogger('debug') });
 * ```
 */
export { createLogger } from './server/logger.js';
export { silentLogger } from './core/log.js';
export type { Logger, LogFn } from './core/log.js';
export type { LogLevel } from './server/logger.js';

/**
 * HTTP serving options and the running endpoint.
 *
 * @example
 * ```ts
 * const { url, close } = await reservoir.listen({ host: '127.0.0.1', port: 0 });
 * ```
 */
export type { HttpOptions, HttpEndpoint } from './http/app.js';
