/**
 * The mount table. Providers are mounted at URI prefixes; a client URI is routed to the mount with
 * the longest matching prefix, and list pages are merged across mounts, in mount order, behind
 * opaque cursors that carry (mount, provider key). A page costs what its size costs, never more:
 * every provider call is bounded by the room left in the page. The Registry serves; whether the
 * caller may see or reach what it serves is decided by its `access` (core/access-control.ts).
 */
import type { AccessPolicy } from './access.js';
import { AccessControl } from './access-control.js';
import { DEFAULT_SOURCE_LIST_TIMEOUT_MS, listWithin } from './bounded-list.js';
import { createCursorCodec, type CursorCodec } from './cursor.js';
import {
  ConfigError,
  InvalidArgumentError,
  InvalidCursorError,
  isReservoirError,
  NotFoundError,
} from './errors.js';
import type {
  CallContext,
  Completion,
  DirectoryEntry,
  Provider,
  ProviderPage,
  ReadResult,
  ResourceInfo,
  ResourceTemplate,
  ResourceTemplateInfo,
  TemplateVariables,
} from './types.js';
import type { Logger } from './log.js';
import type { Principal } from './principal.js';
import { ResourceHints, type ResourceIconMode } from './hints.js';
import { checkPageSize, DEFAULT_PAGE_SIZE } from './page-size.js';
import { checkReadSize, DEFAULT_MAX_RESPONSE_BYTES, withReadBudget } from './read-size.js';
import type { ReadLayer } from './read-layer.js';
import { SourceHealth, type SkippedSource } from './source-health.js';
import { Templates, type TemplateEngine } from './templates.js';
import { parseUri } from './uri.js';
import { definedProps } from './defined.js';

export interface RegistryOptions {
  /** Access rules applied to every route to a resource. @default none: everything is allowed */
  access?: AccessPolicy | undefined;
  /** Matches URIs against provider templates on read. Without one, templates are listed but reads go to `read`. */
  templateEngine?: TemplateEngine | undefined;
  /** Items per list page when the caller does not say. @default 1000 */
  pageSize?: number | undefined;
  /** Secret that seals cursors; see createCursorCodec. @default a random per-process key */
  cursorSecret?: string | Uint8Array | undefined;
  /**
   * Largest encoded read response, in bytes: base64 and JSON escaping counted, as the client will
   * receive it. @default 10354688 (10 MiB less 128 KiB: under the SDK client's 10 MiB stdio limit)
   */
  maxResponseBytes?: number | undefined;
  /**
   * Time one source may spend on its part of a `resources/list` page, ms; past it the page goes on
   * without that source (see `ListPage.skipped`). @default 2000
   */
  sourceListTimeoutMs?: number | undefined;
  /** Pause between two background probes of a source that is down, ms. @default 1000 */
  sourceProbeIntervalMs?: number | undefined;
  /** Where source outages and recoveries are logged (once per outage). @default silent */
  logger?: Logger | undefined;
  /** A layer over every source's reads (documents as Markdown: src/documents/reads.ts). @default none */
  reads?: ReadLayer | undefined;
  /** Audience and priority hints on listed resources. @default the name-derived defaults */
  hints?: ResourceHints | undefined;
}

export interface ListPage<T> {
  items: T[];
  nextCursor?: string;
  /** Sources this page went without because they failed or ran past their budget (absent when none). */
  skipped?: SkippedSource[];
}

export { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from './page-size.js';
export { DEFAULT_MAX_RESPONSE_BYTES } from './read-size.js';
/** A provider may return short pages (e.g. skipping ignored entries); this bounds the calls per page. */
const MAX_PROVIDER_CALLS_PER_PAGE = 64;

export class Registry {
  readonly pageSize: number;
  readonly maxResponseBytes: number;
  readonly sourceListTimeoutMs: number;
  /** Which sources are failing now (fed by list pages and readiness checks). */
  readonly health: SourceHealth;
  private readonly mounts: Provider[] = [];
  private readonly cursors: CursorCodec;
  private readonly templates: Templates;
  private readonly reads: ReadLayer | undefined;
  /** The layer's templates per provider (built once: completers hold the registry's read). */
  private readonly layerTemplates = new WeakMap<Provider, ResourceTemplate[]>();
  private hints: ResourceHints;
  /** Every access decision: the Registry serves resources and asks here (see access-control.ts). */
  readonly access: AccessControl;

  constructor(options: RegistryOptions = {}) {
    this.pageSize = checkPageSize(options.pageSize ?? DEFAULT_PAGE_SIZE, 'pageSize');
    this.cursors = createCursorCodec(options.cursorSecret);
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.templates = new Templates(options.templateEngine);
    this.reads = options.reads;
    this.access = new AccessControl(this, options.access);
    this.hints = options.hints ?? new ResourceHints();
    this.sourceListTimeoutMs = options.sourceListTimeoutMs ?? DEFAULT_SOURCE_LIST_TIMEOUT_MS;
    if (!Number.isSafeInteger(this.sourceListTimeoutMs) || this.sourceListTimeoutMs < 1) {
      throw new ConfigError(
        'sourceListTimeoutMs',
        'must be a whole number of milliseconds, at least 1',
        { value: this.sourceListTimeoutMs },
      );
    }
    this.health = new SourceHealth({
      logger: options.logger,
      probeBudgetMs: this.sourceListTimeoutMs,
      probeIntervalMs: options.sourceProbeIntervalMs,
    });
  }

  /** Replaces the access rules (a config reload); undefined allows everything. */
  setAccess(access: AccessPolicy | undefined): void {
    this.access.set(access);
  }

  /** Replaces the audience and priority hints (a config reload). */
  setHints(hints: ResourceHints): void {
    this.hints = hints;
  }

  /** Which listed resources carry the icon of their kind (the `hints` section's `resourceIcons`). */
  get resourceIcons(): ResourceIconMode {
    return this.hints.resourceIcons;
  }

  /** Whether access rules are in force (answers then depend on who asks: cacheScope private). */
  get restricted(): boolean {
    return this.access.restricted;
  }

  /** Mounts a provider. Its root must be an absolute URI prefix that overlaps no other mount. */
  mount(provider: Provider): this {
    const root = provider.root;
    const parsed = parseUri(root);
    if (parsed.href !== root)
      throw new ConfigError(
        'root',
        `provider root must be normalised: ${root} (expected ${parsed.href})`,
      );
    for (const other of this.mounts) {
      if (other.root.startsWith(root) || root.startsWith(other.root)) {
        throw new ConfigError('root', `${root} overlaps ${other.root}; serve the outer one only`, {
          root,
          other: other.root,
        });
      }
    }
    this.mounts.push(provider);
    return this;
  }

  /**
   * Unmounts the provider at `root` and closes it. Cursors pointing into it become invalid; its
   * watches stop when their subscribers leave. Returns whether something was mounted there.
   */
  async unmount(root: string): Promise<boolean> {
    const index = this.mounts.findIndex((p) => p.root === root);
    if (index < 0) return false;
    const [provider] = this.mounts.splice(index, 1);
    this.health.forget(root);
    await provider?.close?.();
    return true;
  }

  /** The mounted providers, in mount order. */
  providers(): readonly Provider[] {
    return this.mounts;
  }

  /** The provider owning `href` (already normalised), or undefined. */
  route(href: string): Provider | undefined {
    let best: Provider | undefined;
    for (const provider of this.mounts) {
      const root = provider.root;
      const owns = href.startsWith(root) || (root.endsWith('/') && href === root.slice(0, -1));
      if (owns && (best === undefined || root.length > best.root.length)) best = provider;
    }
    return best;
  }

  async read(uri: unknown, ctx: CallContext): Promise<ReadResult> {
    const parsed = parseUri(uri);
    const provider = this.route(parsed.href);
    // The read layer's own parameters (?as=, ?pages=, …) are judged, routed and read without.
    const prepared =
      provider === undefined ? undefined : this.reads?.prepare(parsed.href, provider);
    const href = prepared?.source ?? parsed.href;
    // A resource the principal may not read is answered exactly like a missing one.
    if (provider === undefined || !(await this.access.admits(ctx.principal, 'read', href, ctx)))
      throw new NotFoundError(parsed.raw);
    const matched = this.matchTemplate(provider, href);
    const call = withReadBudget(
      this.access.providerContext(ctx),
      this.maxResponseBytes,
      prepared?.renderMaxBytes,
    );
    let result: ReadResult;
    try {
      result =
        matched?.template.read !== undefined
          ? await matched.template.read(href, matched.variables, call)
          : await provider.read(href, call);
    } catch (error) {
      // Providers see the normalised URI; the client is answered with the one it sent.
      if (error instanceof NotFoundError && parsed.raw !== href)
        throw new NotFoundError(parsed.raw, { cause: error });
      throw prepared?.explain?.(error) ?? error;
    }
    if (prepared !== undefined) result = await prepared.finish(result, call, this.maxResponseBytes);
    checkReadSize(result, parsed.raw, this.maxResponseBytes);
    return result;
  }

  /**
   * A source's answer for `href` as a plain client read would shape it (a document's rendition
   * first), without access checks: the search index's own reads, filtered by access when searched.
   * `rendered` says whether the layer turns this resource into text the source alone does not give.
   */
  indexRead(provider: Provider, href: string, ctx: CallContext): Promise<ReadResult> {
    const prepared = this.reads?.prepare(href, provider);
    if (prepared === undefined) return provider.read(href, ctx);
    const call =
      prepared.renderMaxBytes === undefined
        ? ctx
        : withReadBudget(ctx, ctx.maxResponseBytes, prepared.renderMaxBytes);
    return provider.read(prepared.source, call).then(
      (result) => prepared.finish(result, ctx, this.maxResponseBytes),
      (error: unknown) => {
        throw prepared.explain?.(error) ?? error;
      },
    );
  }

  /** Whether the read layer renders this resource as text (a document): see ReadLayer.renders. */
  rendersAsText(mimeType: string | undefined, uri: string): boolean {
    return this.reads?.renders?.(mimeType, uri) ?? false;
  }

  /** A provider's templates, then those the read layer adds beside them. */
  private templatesOf(provider: Provider): ResourceTemplate[] {
    const own = provider.templates?.() ?? [];
    if (this.reads?.templates === undefined) return own;
    let added = this.layerTemplates.get(provider);
    if (added === undefined) {
      added = this.reads.templates(provider, (uri, ctx) => this.read(uri, ctx));
      this.layerTemplates.set(provider, added);
    }
    return added.length === 0 ? own : [...own, ...added];
  }

  /**
   * One page of the children of the directory the client URI `uri` names (`resources/directory/read`),
   * judged like a read of it (a directory the principal may not read answers like a missing one) and
   * each child like a listed resource. The cursor is sealed to this directory and the principal.
   */
  async readDirectory(
    uri: unknown,
    cursor: string | undefined,
    ctx: CallContext,
    options: { limit?: number; binding?: string } = {},
  ): Promise<ListPage<DirectoryEntry>> {
    const parsed = parseUri(uri);
    const provider = this.route(parsed.href);
    if (
      provider?.readDirectory === undefined ||
      !(await this.access.admits(ctx.principal, 'read', parsed.href, ctx))
    )
      throw new NotFoundError(parsed.raw);
    const limit = checkPageSize(options.limit ?? this.pageSize, 'limit');
    const binding = options.binding ?? bindingOf(ctx.principal);
    const after =
      cursor === undefined ? undefined : this.openCursor(cursor, 'directory', parsed.href, binding);
    let page;
    try {
      page = await provider.readDirectory(
        parsed.href,
        after,
        limit,
        this.access.providerContext(ctx),
      );
    } catch (error) {
      if (error instanceof NotFoundError && parsed.raw !== parsed.href)
        throw new NotFoundError(parsed.raw, { cause: error });
      throw error;
    }
    const items = page.items.filter(
      (item) => item.kind !== 'special' && this.access.listed(ctx.principal, item.uri),
    );
    if (page.last === undefined) return { items };
    return {
      items,
      nextCursor: this.cursors.encode(
        { list: 'directory', mount: parsed.href, after: page.last },
        binding,
      ),
    };
  }

  /** Seals a position in a list the registry does not own (skills) behind the same authenticated cursors. */
  sealCursor(list: string, scope: string, after: string, principal: Principal | undefined): string {
    return this.cursors.encode({ list, mount: scope, after }, bindingOf(principal));
  }

  /** The position a sealed cursor holds; InvalidCursorError for a forged one, another list's, scope's or principal's. */
  openCursor(
    cursor: string,
    list: string,
    scope: string,
    binding: string | undefined,
  ): string | undefined {
    const position = this.cursors.decode(cursor, list, binding);
    if (position.mount !== scope)
      throw new InvalidCursorError('this cursor belongs to another list');
    return position.after;
  }

  /** The binding cursors of `principal` carry. */
  bindingOf(principal: Principal | undefined): string | undefined {
    return bindingOf(principal);
  }

  /** One page of resources merged across mounts. `binding` ties cursors to a principal. */
  async listResources(
    cursor: string | undefined,
    ctx: CallContext,
    options: { limit?: number; binding?: string } = {},
  ): Promise<ListPage<ResourceInfo>> {
    const limit = checkPageSize(options.limit ?? this.pageSize, 'limit');
    const binding = options.binding ?? bindingOf(ctx.principal);
    let { index, after } = this.start('resources', cursor, binding);
    const items: ResourceInfo[] = [];
    const call = this.access.providerContext(ctx);
    const skipped: SkippedSource[] = [];
    let calls = 0;
    // Each source has its own time budget for this page, counted from its first call in it.
    let sourceStarted = Date.now();
    // Calls the current source answered in this page: once it has answered, running out of budget
    // ends the page there (the cursor resumes it) instead of calling it failed.
    let sourceAnswered = 0;
    while (
      index < this.mounts.length &&
      items.length < limit &&
      calls < MAX_PROVIDER_CALLS_PER_PAGE
    ) {
      const provider = this.mounts[index]!;
      calls += 1;
      let page: ProviderPage = { items: [] };
      const outage = this.health.outage(provider.root);
      if (outage !== undefined) {
        // A source known to be down is skipped at once; the health probe brings it back.
        skipped.push({ source: outage.source, reason: outage.reason });
      } else {
        const remaining = this.sourceListTimeoutMs - (Date.now() - sourceStarted);
        if (sourceAnswered > 0 && remaining <= 0) break;
        try {
          page = await listWithin(provider, after, limit - items.length, call, remaining);
          sourceAnswered += 1;
          this.health.succeeded(provider);
        } catch (error) {
          // The caller gave up (cancel, disconnect, deadline): that is not the source's failure.
          if (ctx.signal.aborted) throw error;
          if (sourceAnswered > 0 && isReservoirError(error) && error.code === 'timeout') break;
          // One failing source never hides the others: this traversal goes on without it (docs/design.md).
          skipped.push(this.health.failed(provider, error));
        }
      }
      for (const item of page.items)
        if (this.access.listed(ctx.principal, item.uri)) items.push(this.hints.apply(item));
      if (page.last === undefined) {
        index += 1;
        after = undefined;
        sourceStarted = Date.now();
        sourceAnswered = 0;
      } else {
        after = page.last;
      }
    }
    const done: ListPage<ResourceInfo> = skipped.length === 0 ? { items } : { items, skipped };
    if (index >= this.mounts.length) return done;
    const position = {
      list: 'resources',
      mount: this.mounts[index]!.root,
      ...definedProps({ after }),
    };
    return { ...done, nextCursor: this.cursors.encode(position, binding) };
  }

  /** One page of resource templates merged across mounts. */
  listTemplates(
    cursor: string | undefined,
    options: { limit?: number; binding?: string; principal?: Principal } = {},
  ): ListPage<ResourceTemplateInfo> {
    const limit = checkPageSize(options.limit ?? this.pageSize, 'limit');
    const binding = options.binding ?? bindingOf(options.principal);
    const start = this.start('templates', cursor, binding);
    let index = start.index;
    const items: ResourceTemplateInfo[] = [];
    let offset = start.after === undefined ? 0 : Number(start.after);
    while (index < this.mounts.length && items.length < limit) {
      const templates = this.templatesOf(this.mounts[index]!);
      const taken = templates.slice(offset, offset + limit - items.length);
      for (const template of taken)
        if (this.access.templateVisible(options.principal, template)) items.push(template);
      offset += taken.length;
      if (offset >= templates.length) {
        index += 1;
        offset = 0;
      }
    }
    if (index >= this.mounts.length) return { items };
    const position = {
      list: 'templates',
      mount: this.mounts[index]!.root,
      ...(offset === 0 ? {} : { after: String(offset) }),
    };
    return { items, nextCursor: this.cursors.encode(position, binding) };
  }

  /** The first template of `provider` with a reader that matches `href`. */
  matchTemplate(
    provider: Provider,
    href: string,
  ): { template: ResourceTemplate; variables: TemplateVariables } | undefined {
    return this.templates.match(provider, href);
  }

  /** Completes an argument of the template whose `uriTemplate` is exactly `uriTemplate`. */
  async completeTemplate(
    uriTemplate: string,
    argument: string,
    value: string,
    context: Record<string, string>,
    ctx: CallContext,
  ): Promise<Completion> {
    let found: ResourceTemplate | undefined;
    let owner: Provider | undefined;
    for (const provider of this.mounts) {
      found = this.templatesOf(provider).find((t) => t.uriTemplate === uriTemplate);
      owner = provider;
      if (found !== undefined) break;
    }
    if (
      found === undefined ||
      owner === undefined ||
      !this.access.templateVisible(ctx.principal, found)
    ) {
      throw new InvalidArgumentError('ref', `no resource template ${uriTemplate}`, {
        uri: uriTemplate,
      });
    }
    const judge = this.access.completionJudge(owner, ctx);
    return this.templates.complete(
      found,
      argument,
      value,
      context,
      this.access.providerContext(ctx),
      judge,
    );
  }

  /** One page of a name-sorted list (prompts, tools), behind the same sealed cursors. */
  pageByName<T extends { name: string }>(
    list: 'prompts' | 'tools',
    all: readonly T[],
    cursor: string | undefined,
    options: { limit?: number; binding?: string; principal?: Principal } = {},
  ): ListPage<T> {
    const limit = checkPageSize(options.limit ?? this.pageSize, 'limit');
    const binding = options.binding ?? bindingOf(options.principal);
    const sorted = this.access.usable(options.principal, list, all);
    let start = 0;
    if (cursor !== undefined) {
      const position = this.cursors.decode(cursor, list, binding);
      const after = position.after ?? '';
      while (start < sorted.length && sorted[start]!.name <= after) start += 1;
    }
    const items = sorted.slice(start, start + limit);
    if (start + limit >= sorted.length) return { items };
    const position = { list, mount: '', after: items[items.length - 1]!.name };
    return { items, nextCursor: this.cursors.encode(position, binding) };
  }

  /**
   * Seals a position in a list the registry does not page itself (search results) with the same
   * codec as its own cursors, bound to the principal. `list` names the list (and what it was asked).
   */
  sealPosition(list: string, after: string, principal?: Principal): string {
    return this.cursors.encode({ list, mount: '', after }, bindingOf(principal));
  }

  /** Opens a cursor `sealPosition` minted for `list` and `principal`; throws InvalidCursorError otherwise. */
  openPosition(cursor: string, list: string, principal?: Principal): string {
    const position = this.cursors.decode(cursor, list, bindingOf(principal));
    if (position.mount !== '' || position.after === undefined)
      throw new InvalidCursorError('not a cursor for this list');
    return position.after;
  }

  async close(): Promise<void> {
    this.health.close();
    const providers = this.mounts.splice(0);
    await Promise.allSettled([...providers.map((p) => p.close?.()), this.reads?.close?.()]);
  }

  private start(
    list: string,
    cursor: string | undefined,
    binding: string | undefined,
  ): { index: number; after?: string } {
    if (cursor === undefined) return { index: 0 };
    const position = this.cursors.decode(cursor, list, binding);
    const index = this.mounts.findIndex((p) => p.root === position.mount);
    if (index < 0)
      throw new InvalidCursorError('the source this cursor pointed into is no longer served');
    const after = position.after;
    if (after !== undefined) {
      const provider = this.mounts[index]!;
      const valid =
        list === 'templates'
          ? /^[1-9]\d{0,8}$/.test(after)
          : (provider.isValidKey?.(after) ?? true);
      if (!valid) throw new InvalidCursorError('the cursor position is not valid for its source');
    }
    return after === undefined ? { index } : { index, after };
  }
}

/** What a cursor is bound to: the principal's kind and id (a token and an OAuth subject may share an id). */
function bindingOf(principal: Principal | undefined): string | undefined {
  return principal === undefined ? undefined : `${principal.kind}:${principal.id}`;
}
