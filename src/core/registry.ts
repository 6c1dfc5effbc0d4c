/**
 * The mount table. Providers are mounted at URI prefixes; a client URI is routed to the mount with
 * the longest matching prefix, and list pages are merged across mounts, in mount order, behind
 * opaque cursors that carry (mount, provider key). A page costs what its size costs, never more:
 * every provider call is bounded by the room left in the page. The Registry serves; whether the
 * caller may see or reach what it serves is decided by its `access` (core/access-control.ts).
 */
import type { AccessPolicy } from './access.js';
import { AccessControl } from './access-control.js';
import { checkSourceListTimeout, DEFAULT_SOURCE_LIST_TIMEOUT_MS } from './bounded-list.js';
import { createCursorCodec, cursorBinding, openScoped, type CursorCodec } from './cursor.js';
import { ConfigError, InvalidArgumentError, InvalidCursorError, NotFoundError } from './errors.js';
import type {
  CallContext,
  Completion,
  DirectoryEntry,
  DirectoryPage,
  Provider,
  ReadResult,
  ResourceInfo,
  ResourceTemplate,
  ResourceTemplateInfo,
  TemplateVariables,
} from './types.js';
import type { Principal } from './principal.js';
import { ResourceHints, type ResourceIconMode } from './hints.js';
import { checkPageSize, DEFAULT_PAGE_SIZE } from './page-size.js';
import { checkReadSize, DEFAULT_MAX_RESPONSE_BYTES, withReadBudget } from './read-size.js';
import type { ReadLayer } from './read-layer.js';
import { SourceHealth } from './source-health.js';
import { Templates } from './templates.js';
import { parseUri } from './uri.js';
import { definedProps } from './defined.js';
import {
  gatherResources,
  gatherTemplates,
  nameSortedPage,
  openMountPosition,
  sealMountPosition,
  type ResourceSources,
} from './list-pages.js';
import type { ListPage, RegistryOptions } from './registry-options.js';

export type { ListPage, RegistryOptions } from './registry-options.js';
export { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from './page-size.js';
export { DEFAULT_MAX_RESPONSE_BYTES } from './read-size.js';

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
    this.sourceListTimeoutMs = checkSourceListTimeout(
      options.sourceListTimeoutMs ?? DEFAULT_SOURCE_LIST_TIMEOUT_MS,
    );
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
      result = await (matched?.template.read !== undefined
        ? matched.template.read(href, matched.variables, call)
        : provider.read(href, call));
    } catch (error) {
      throw inClientTerms(prepared?.explain?.(error) ?? error, parsed.raw, href);
    }
    if (prepared !== undefined) result = await prepared.finish(result, call, this.maxResponseBytes);
    checkReadSize(result, parsed.raw, this.maxResponseBytes);
    return result;
  }

  /**
   * A source's answer for `href` as a plain client read would shape it (a document's rendition
   * first), without access checks: the search index's own reads, filtered by access when searched.
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
    const binding = options.binding ?? cursorBinding(ctx.principal);
    const after =
      cursor === undefined
        ? undefined
        : openScoped(this.cursors, cursor, 'directory', parsed.href, binding);
    let page: DirectoryPage;
    try {
      page = await provider.readDirectory(
        parsed.href,
        after,
        limit,
        this.access.providerContext(ctx),
      );
    } catch (error) {
      throw inClientTerms(error, parsed.raw, parsed.href);
    }
    const items = page.items.filter(
      (item) => item.kind !== 'special' && this.access.listed(ctx.principal, item.uri),
    );
    if (page.last === undefined) return { items };
    const position = { list: 'directory', mount: parsed.href, after: page.last };
    return { items, nextCursor: this.cursors.encode(position, binding) };
  }

  /** One page of resources merged across mounts. `binding` ties cursors to a principal. */
  async listResources(
    cursor: string | undefined,
    ctx: CallContext,
    options: { limit?: number; binding?: string } = {},
  ): Promise<ListPage<ResourceInfo>> {
    const limit = checkPageSize(options.limit ?? this.pageSize, 'limit');
    const binding = options.binding ?? cursorBinding(ctx.principal);
    const from = openMountPosition(this.cursors, this.mounts, 'resources', cursor, binding);
    const { items, skipped, next } = await gatherResources(
      this.resourceSources(),
      from,
      limit,
      ctx,
    );
    const nextCursor = sealMountPosition(this.cursors, this.mounts, 'resources', next, binding);
    const shown = skipped.length === 0 ? undefined : skipped;
    return { items, ...definedProps({ skipped: shown, nextCursor }) };
  }

  /** What gathering a page of resources reads: the mounts, their health, access and hints now. */
  private resourceSources(): ResourceSources {
    const { mounts, health, access, hints, sourceListTimeoutMs } = this;
    return { mounts, health, access, hints, sourceListTimeoutMs };
  }

  /** One page of resource templates merged across mounts. */
  listTemplates(
    cursor: string | undefined,
    options: { limit?: number; binding?: string; principal?: Principal } = {},
  ): ListPage<ResourceTemplateInfo> {
    const limit = checkPageSize(options.limit ?? this.pageSize, 'limit');
    const binding = options.binding ?? cursorBinding(options.principal);
    const from = openMountPosition(this.cursors, this.mounts, 'templates', cursor, binding);
    const { items, next } = gatherTemplates(
      this.mounts,
      (provider) => this.templatesOf(provider),
      this.access,
      options.principal,
      from,
      limit,
    );
    const nextCursor = sealMountPosition(this.cursors, this.mounts, 'templates', next, binding);
    return { items, ...definedProps({ nextCursor }) };
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
    const binding = options.binding ?? cursorBinding(options.principal);
    const sorted = this.access.usable(options.principal, list, all);
    return nameSortedPage(this.cursors, list, sorted, cursor, limit, binding);
  }

  /**
   * Seals a position in a list the registry does not page itself (search results, skills) with the
   * same codec as its own cursors, bound to the principal. `list` names the list (and what it was asked).
   */
  sealPosition(list: string, after: string, principal?: Principal): string {
    return this.cursors.encode({ list, mount: '', after }, cursorBinding(principal));
  }

  /** Opens a cursor `sealPosition` minted for `list` and `principal`; throws InvalidCursorError otherwise. */
  openPosition(cursor: string, list: string, principal?: Principal): string {
    const after = openScoped(this.cursors, cursor, list, '', cursorBinding(principal));
    if (after === undefined) throw new InvalidCursorError('not a cursor for this list');
    return after;
  }

  async close(): Promise<void> {
    this.health.close();
    const providers = this.mounts.splice(0);
    await Promise.allSettled([...providers.map((p) => p.close?.()), this.reads?.close?.()]);
  }
}

/** Providers see the normalised URI; the client is answered with the one it sent. */
function inClientTerms(error: unknown, raw: string, href: string): unknown {
  return error instanceof NotFoundError && raw !== href
    ? new NotFoundError(raw, { cause: error })
    : error;
}
