/**
 * The resource model: the Registry (mount table, merged pages), the provider contract for writing
 * sources, named collections, subscriptions and the typed errors. Re-exported by src/index.ts.
 */

/**
 * The mount table with merged, cursor-paged listing; usable on its own, without any transport.
 *
 * @example
 * ```ts
 * const registry = new Registry({ pageSize: 100 }).mount(filesProvider({ root: '.' }));
 * const page = await registry.listResources(undefined, { signal: AbortSignal.timeout(5000) });
 * ```
 */
export {
  Registry,
  DEFAULT_PAGE_SIZE,
  MAX_PAGE_SIZE,
  DEFAULT_MAX_RESPONSE_BYTES,
} from '../core/registry.js';
export type { RegistryOptions, ListPage } from '../core/registry.js';
export type { TemplateEngine, CompiledTemplate } from '../core/templates.js';

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
  ResourceTemplate,
  TemplateVariables,
  Completion,
  Completer,
  ContentBlock,
  DirectoryEntry,
  DirectoryPage,
} from '../core/types.js';

/**
 * Documents (PDF, Word, Excel, slides, HTML, EPUB) read as Markdown from every source: the read
 * layer a server installs by default (`ReservoirOptions.reads`), made here to set its bounds — the
 * document cap, the workers, the rendition cache on disk (docs/documents.md).
 *
 * @example
 * ```ts
 * const renderer = new DocumentRenderer({ maxDocumentBytes: 256 * 1024 * 1024, workers: 2 });
 * createReservoir({ providers, reads: new DocumentReads(renderer) });
 * ```
 */
export { DocumentReads } from '../documents/reads.js';
export { DocumentRenderer, DEFAULT_MAX_DOCUMENT_BYTES } from '../documents/index.js';
export type { DocumentRendererOptions, RenderLimits } from '../documents/index.js';

/**
 * A named, ordered collection (the server's `prompts` and `tools`); changes send `list_changed`.
 *
 * @example
 * ```ts
 * reservoir.tools.remove('word_count');
 * ```
 */
export { Catalog } from '../core/named-items.js';

/**
 * Counted subscriptions shared by both protocol eras; `stats()` shows what is being watched.
 *
 * @example
 * ```ts
 * const { watches, channels } = reservoir.subscriptions.stats();
 * ```
 */
export type {
  Subscriptions,
  SubscriptionOptions,
  SubscriptionStats,
} from '../core/subscriptions.js';

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
} from '../core/errors.js';
export type { ErrorCode, ErrorData } from '../core/errors.js';
