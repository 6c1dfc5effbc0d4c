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
export { DEFAULT_SECRET_PATTERNS } from './providers/files/secrets.js';
export type { FilesOptions, FilesProvider, DirectoryChild } from './providers/files/index.js';
export type { WatchOptions } from './providers/files/watch.js';

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
} from './core/registry.js';
export type { RegistryOptions, ListPage } from './core/registry.js';
export type { TemplateEngine, CompiledTemplate } from './core/templates.js';

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
} from './core/types.js';

/**
 * Agent Skills catalogs (the `io.modelcontextprotocol/skills` extension): build them from files or
 * git sources and pass them to `createReservoir`.
 *
 * @example
 * ```ts
 * const skills = await buildSkills([{ source: { type: 'files', root: './skills' }, origin: 'skills' }], { live: true });
 * const reservoir = createReservoir({ skills });
 * ```
 */
export { buildSkills } from './server/skills.js';
export type { SkillsServing } from './mcp/skills.js';
export type { SkillsSettings } from './config/skills.js';

/**
 * Prompts: message templates a user picks; resources they embed (`{ type: 'resource_ref', uri }`)
 * are read through the registry when the prompt is fetched.
 *
 * @example
 * ```ts
 * reservoir.prompts.add({
 *   name: 'summarise',
 *   description: 'Summarise one document',
 *   arguments: [{ name: 'uri', required: true }],
 *   messages: ({ uri }) => [
 *     { role: 'user', content: { type: 'text', text: 'Summarise this document.' } },
 *     { role: 'user', content: { type: 'resource_ref', uri } },
 *   ],
 * });
 * ```
 */
export type { Prompt, PromptArgument, PromptMessage, PromptContent } from './core/prompts.js';

/**
 * Prompts whose messages may need client input first: `ctx` is a complete PromptContext.
 *
 * @example
 * ```ts
 * reservoir.prompts.add(definePrompt({
 *   name: 'standup',
 *   description: 'A stand-up summary, for a team the user picks',
 *   messages(_args, ctx) {
 *     const team = ctx.accepted<{ team: string }>('team');
 *     if (team === undefined) return inputRequired({ inputRequests: { team: inputRequired.elicit('Which team?', z.object({ team: z.string() })) } });
 *     return [{ role: 'user', content: { type: 'text', text: `Summarise the stand-up of ${team.team}.` } }];
 *   },
 * }));
 * ```
 */
export { definePrompt } from './core/prompts.js';
export type { PromptContext, PromptDefinition } from './core/prompts.js';

/**
 * Client input during a request (multi-round-trip requests, 2026-07-28): a tool or prompt returns
 * `inputRequired(...)` to ask for an elicitation, a sampling or the client's roots, and reads the
 * answers on the retry. 2025-era clients get real server-to-client requests instead, so one handler
 * serves both eras. State between rounds is sealed by the server (see `ReservoirOptions.requestState`).
 *
 * @example
 * ```ts
 * defineTool({
 *   name: 'greet',
 *   description: 'Greets the user by the name they give',
 *   input: z.object({}),
 *   call(_args, ctx) {
 *     const answer = ctx.accepted('name', z.object({ name: z.string() }));
 *     if (answer === undefined) {
 *       return inputRequired({ inputRequests: { name: inputRequired.elicit('What is your name?', z.object({ name: z.string() })) }, state: { step: 1 } });
 *     }
 *     return { content: [{ type: 'text', text: `Hello, ${answer.name}!` }] };
 *   },
 * });
 * ```
 */
export { inputRequired, isInputRequired } from './core/input.js';
export type {
  InputContext,
  InputRequest,
  InputRequired,
  InputResponse,
  ClientCapabilities,
  ElicitationSchema,
  SamplingMessage,
} from './core/input.js';
export type { RequestStateOptions } from './mcp/input.js';

/**
 * Tools: model-invoked functions with zod-described arguments.
 *
 * @example
 * ```ts
 * reservoir.tools.add(defineTool({
 *   name: 'word_count',
 *   description: 'Counts the words of a text resource',
 *   input: z.object({ uri: z.string() }),
 *   async call({ uri }) {
 *     const { contents } = await reservoir.registry.read(uri, { signal: AbortSignal.timeout(5000) });
 *     const text = contents.map((c) => ('text' in c ? c.text : '')).join(' ');
 *     return { content: [{ type: 'text', text: String(text.split(/\s+/).filter(Boolean).length) }] };
 *   },
 * }));
 * ```
 */
export { defineTool } from './core/tools.js';
export { BlobCaps, BlobTooLargeError, type BlobCapRule } from './core/blob-caps.js';
export type {
  Tool,
  ToolContext,
  ToolResult,
  ToolAnnotations,
  LogLevel as ToolLogLevel,
} from './core/tools.js';

/**
 * The built-in tools for tool-only hosts: `list_resources`, `read_resource` and `find_resources`
 * over a registry (`reservoir serve` offers them unless `--no-tools`).
 *
 * @example
 * ```ts
 * for (const tool of builtinTools(reservoir.registry)) reservoir.tools.add(tool);
 * ```
 */
export { builtinTools, whoAmITool } from './tools/index.js';
export type { BuiltinToolsOptions, FindOptions } from './tools/index.js';

/**
 * A named, ordered collection (the server's `prompts` and `tools`); changes send `list_changed`.
 *
 * @example
 * ```ts
 * reservoir.tools.remove('word_count');
 * ```
 */
export { Catalog } from './core/named-items.js';

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
} from './core/subscriptions.js';

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
 * The client did not declare a capability a tool or prompt needs: sent as -32021
 * (MissingRequiredClientCapability; HTTP 400) with `data.requiredCapabilities`.
 *
 * @example
 * ```ts
 * ctx.requireCapabilities({ sampling: {} }); // throws MissingClientCapabilityError when undeclared
 * throw new MissingClientCapabilityError({ elicitation: {} });
 * ```
 */
export { MissingClientCapabilityError } from './core/input.js';

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

/**
 * Cluster mode: several instances behind a load balancer on one Redis (docs/cluster.md). The Redis
 * client and the OpenTelemetry API are loaded by `createCluster` / `createTracer`, not by importing.
 *
 * @example
 * const secret = process.env.RESERVOIR_SECRET!; // the same on every instance, at least 32 bytes
 * const cluster = createCluster({ url: 'redis://10.0.0.5:6379', keyPrefix: 'docs:', secret });
 * const reservoir = createReservoir({ cluster, secret, providers });
 */
export { createCluster, createTracer, Cluster } from './cluster/index.js';
export type {
  ClusterOptions,
  LeaseOptions,
  RedisOptions,
  ReservoirTracer,
} from './cluster/index.js';
export type { SocketTimeouts } from './http/listener.js';
export type { SessionLimitOptions } from './http/session-options.js';
export type { TlsFiles, TlsOptions } from './http/tls.js';
export type { TlsPolicy, TlsVersion } from './http/tls-policy.js';

/**
 * The git provider: a repository's files at any ref as `git://<repo>/<ref>/<path>`, with history and
 * commit views, read through one long-lived `git cat-file` process.
 *
 * @example
 * ```ts
 * createReservoir({ providers: [gitProvider({ path: '/srv/repo', branch: 'main' })] });
 * ```
 */
export { gitProvider } from './providers/git/index.js';
export type { GitOptions, GitProvider } from './providers/git/index.js';

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
export { sqlProvider } from './providers/sql/index.js';
export { sqlQueryTool } from './providers/sql/tool.js';
export type { SqlOptions, SqlProvider } from './providers/sql/index.js';

/**
 * The HTTP API provider: upstream endpoints as `api://<name>/…` resources and templates, with
 * conditional caching, change polling and SSRF protection.
 *
 * @example
 * ```ts
 * httpProvider({ name: 'status', baseUrl: 'https://status.example.com/api/', endpoints: [{ name: 'summary', uri: 'summary', upstream: 'summary.json' }] });
 * ```
 */
export { httpProvider } from './providers/http/index.js';
export type { HttpProviderOptions, HttpProvider } from './providers/http/index.js';

/**
 * The S3 provider: a bucket (or a prefix of it) of AWS S3 or an S3-compatible store as
 * `s3://<bucket>/<key>` resources, polled for changes. The AWS SDK loads at the first request.
 *
 * @example
 * ```ts
 * createReservoir({ providers: [s3Provider({ bucket: 'docs', prefix: 'handbook/', region: 'eu-west-1' })] });
 * ```
 */
export { s3Provider } from './providers/s3/index.js';
export type { S3Options, S3Provider } from './providers/s3/index.js';

/**
 * HTTP authentication: static bearer tokens (stored as SHA-256 digests) and OAuth 2.1 access tokens.
 *
 * @example
 * ```ts
 * const { token, sha256 } = generateToken(); // give `token` to the client, keep `sha256`
 * await reservoir.listen({ port: 7337, auth: createAuthenticator({ tokens: [{ name: 'ci', sha256, scopes: ['docs'] }] }) });
 * ```
 */
export { createAuthenticator, hashToken, generateToken } from './http/auth.js';
export type { Authenticator, Authentication } from './http/auth.js';
export type { AuthOptions, OAuthOptions, StaticTokenOptions } from './http/auth-options.js';

/**
 * Access rules: who may do what to which URIs, applied on every route to a resource.
 *
 * @example
 * ```ts
 * createReservoir({ providers, access: new AccessPolicy({ rules: [{ scopes: ['docs'], allow: ['file:///srv/docs/**'] }] }) });
 * ```
 */
export { AccessPolicy, OPERATIONS } from './core/access.js';
export type { AccessRule, AccessOptions, Operation } from './core/access.js';
export { LOCAL_PRINCIPAL, ANONYMOUS_PRINCIPAL } from './core/principal.js';
export type { Principal } from './core/principal.js';

/**
 * Rate limits, concurrency caps, deadlines and the audit log (see docs/operations.md).
 *
 * @example
 * ```ts
 * createReservoir({ providers, policy: { rateLimit: { requests: { perSecond: 20 } }, audit: { sink: 'file', path: 'audit.log' } } });
 * ```
 */
export type { PolicyOptions } from './server/policy.js';
export { OPERATION_CHANNEL } from './policy/index.js';
