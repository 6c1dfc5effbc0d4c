/**
 * The resource model and the Provider contract. Nothing here knows the MCP SDK: these shapes are
 * what providers produce and what the `mcp/` edge translates onto the wire.
 */
import type { Principal } from './principal.js';

/** An icon a host may show beside a server, tool, prompt or template (MCP `Icon`). */
export interface Icon {
  /**
   * A `data:` URI or an HTTP(S) URL. Reservoir's own icons are `data:` URIs, except resources' over
   * HTTP: a URL on the server's own origin (`/ui/icons/KIND.svg`, src/mcp/resource-icons.ts).
   */
  src: string;
  mimeType?: string;
  sizes?: string[];
  theme?: 'light' | 'dark';
}

/** One listable resource, as `resources/list` shows it. */
export interface ResourceInfo {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  /** Size in bytes, when known without reading the content. */
  size?: number;
  annotations?: {
    audience?: ('user' | 'assistant')[];
    priority?: number;
    /** ISO 8601 timestamp of the last modification. */
    lastModified?: string;
  };
  /** Icons a provider gives; without them the HTTP edge adds the icon of the resource's kind. */
  icons?: Icon[];
  /**
   * An id of the content itself, the same for every resource with identical content (a git blob
   * id). Given only when the list call's context asks for it (`CallContext.contentIds`, which the
   * search index sets), so it never reaches clients.
   */
  contentId?: string;
}

/** Text content: always valid UTF-8. */
export interface TextContents {
  uri: string;
  mimeType?: string;
  text: string;
}

/** Binary content, base64-encoded. */
export interface BlobContents {
  uri: string;
  mimeType?: string;
  blob: string;
}

export type ResourceContents = TextContents | BlobContents;

/** What a provider answers to a read. */
export interface ReadResult {
  contents: ResourceContents[];
  /**
   * How long (ms) a client may consider the content fresh. Omitted means 0: the source can change at
   * any moment and the provider cannot promise otherwise.
   */
  ttlMs?: number;
  /**
   * An id of this version of the resource's content, from the source's own metadata: while it is
   * the same, so are the bytes (files: device, inode, size and times; git: the blob id). The read
   * layer uses it to find a cached rendition without hashing the bytes again. Never sent to clients.
   */
  version?: string;
}

/** A parameterised family of resources (RFC 6570 URI template). */
export interface ResourceTemplateInfo {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  icons?: Icon[];
}

/** Variables a URI template extracted from a URI (RFC 6570 matching; values as they appear in the URI). */
export type TemplateVariables = Record<string, string | string[]>;

/** Completion values for one argument: at most 100, with honest `total` and `hasMore`. */
export interface Completion {
  values: string[];
  total?: number;
  hasMore?: boolean;
}

/** Completes one argument given what the user typed and the arguments already chosen. */
export type Completer = (
  value: string,
  context: Record<string, string>,
  ctx: CallContext,
) => Completion | Promise<Completion>;

/**
 * A template a provider serves: described for `resources/templates/list`, matched on
 * `resources/read` (the registry extracts the variables), and completed argument by argument.
 */
export interface ResourceTemplate extends ResourceTemplateInfo {
  /** Reads the resource a URI matching this template names. Without it, the provider's read serves it. */
  read?(uri: string, variables: TemplateVariables, ctx: CallContext): Promise<ReadResult>;
  /** Completers by variable name. */
  complete?: Record<string, Completer>;
}

/** The content blocks prompts and tools return. */
export type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'image'; data: string; mimeType: string }
  | { type: 'audio'; data: string; mimeType: string }
  | { type: 'resource'; resource: ResourceContents }
  | {
      type: 'resource_link';
      uri: string;
      name: string;
      title?: string;
      description?: string;
      mimeType?: string;
      size?: number;
    };

/** One page of a provider's own list, in its own stable order. */
export interface ProviderPage {
  items: ResourceInfo[];
  /**
   * The stable key of the last item returned, present when more items may follow. The next call
   * resumes strictly after it. Keys are opaque to the core, but must be strings.
   */
  last?: string;
}

/** A document a provider adds to the search index (see `Provider.searchDocuments`). */
export interface SearchDocument {
  /** How the hit is shown; `uri` is what the caller reads (access rules judge it). */
  info: ResourceInfo;
  text: string;
}

/**
 * A resource that may have been added, changed or removed, as `Provider.onChanges` reports it:
 * with what the provider now lists for it (`info`), or without (it is gone or excluded: it and
 * anything under it). `container`: a directory appeared, vanished or moved; what it holds changed.
 */
export interface ResourceChange {
  uri: string;
  info?: ResourceInfo;
  container?: boolean;
}

/** One child a directory read names: a resource, with what kind of entry it is. */
export interface DirectoryEntry extends ResourceInfo {
  /**
   * `directory` for a container (read it with `readDirectory`), `file` for a readable resource,
   * `special` for an entry that is never served (a FIFO, socket or device: named for publishers'
   * checks such as skills validation, never sent to clients).
   */
  kind: 'file' | 'directory' | 'special';
  /** True when the entry is a symbolic link (described by where it leads). */
  link?: boolean;
}

/** One page of a directory's children, in the provider's stable order (keyed by `name`). */
export interface DirectoryPage {
  items: DirectoryEntry[];
  /** The name of the last child returned, present when more may follow. */
  last?: string;
}

/** Per-call context handed to providers. */
export interface CallContext {
  /** Aborted when the client cancels, disconnects or the deadline passes. */
  signal: AbortSignal;
  /** Who is asking; absent means the local user (stdio, or a library call). */
  principal?: Principal;
  /**
   * Set by the registry while access rules are in force: whether the principal may see `uri` (a
   * child a directory listing names; `container` for one that holds others) or read it (the real
   * target a symlink leads to). Providers that reveal other URIs inside an answer consult it.
   */
  allows?: (operation: 'list' | 'read', uri: string, container?: boolean) => boolean;
  /** Set by the search index: a provider that can give `ResourceInfo.contentId` in `list` does. */
  contentIds?: boolean;
  /**
   * Set by the search index on its reads: each resource is read once and not asked for again soon,
   * so a cache of recent reads neither answers nor keeps it.
   */
  readOnce?: boolean;
  /**
   * Set by the registry on reads: the largest answer it will send, encoded (base64 and JSON
   * escaping counted). A provider refuses a resource that cannot fit before reading it.
   */
  maxResponseBytes?: number;
  /**
   * Set by the registry when the read layer answers a rendition of the resource (a document as
   * Markdown), not the resource itself: the source reads up to this many bytes whatever its own
   * cap and `maxResponseBytes` (src/providers/utils/read-limit.ts).
   */
  renderMaxBytes?: number;
}

/**
 * A source of resources mounted at a URI prefix. `list` and `read` are required; everything else
 * is an optional capability, detected by presence.
 */
export interface Provider {
  /** A short name for logs and errors, e.g. `files`. */
  readonly name: string;
  /** The URI prefix this provider owns, e.g. `file:///srv/docs/`. Every URI it lists starts with it. */
  readonly root: string;
  /** One page, resuming strictly after `after` (a key this provider returned as `last`). */
  list(after: string | undefined, limit: number, ctx: CallContext): Promise<ProviderPage>;
  /** Throws NotFoundError for a missing resource; never returns an empty array for one. */
  read(uri: string, ctx: CallContext): Promise<ReadResult>;
  /**
   * The resource `uri` (normalised, routed here) names, as this provider lists it: its canonical
   * URI, the same for every spelling `read`, a template read and `watch` accept — a trailing slash,
   * a view query (`?lines=`, `?limit=`, `?after=`), a percent-encoding or case variant the provider
   * folds. When the spelling also selects a version of the resource that rules may tell apart (a
   * git ref other than the listed one), return the listed URI first and the version's own URI
   * after it: rules must allow both. Access rules judge these and the spelling (see
   * `AccessPolicy.decide`). Throws NotFoundError when `uri` names nothing, and the
   * InvalidArgumentError `read` would for a malformed one. Asked only while access rules apply to
   * the caller. Without it, the spelling is the resource: a provider that accepts aliases must
   * answer it.
   */
  canonical?(
    uri: string,
    ctx: CallContext,
  ): string | readonly string[] | Promise<string | readonly string[]>;
  /**
   * One page of what `list` lists under the container `uri` (as a `container` change names it), in
   * `list`'s order and with its keys: a directory that appeared is caught up by walking only its
   * subtree (the search index does). An empty page when `uri` names nothing listable.
   */
  listUnder?(
    uri: string,
    after: string | undefined,
    limit: number,
    ctx: CallContext,
  ): Promise<ProviderPage>;
  /** Whether `after` is a key this provider could have produced (checked before resuming a cursor). */
  isValidKey?(key: string): boolean;
  /** The templates this provider serves, in a stable order. */
  templates?(): ResourceTemplate[];
  /**
   * Change events for one resource, once each change has settled; resolves (when the watch is
   * live) with the function that stops them. Throws NotFoundError for a missing or refused URI,
   * and then starts nothing.
   */
  watch?(uri: string, onChange: () => void): (() => void) | Promise<() => void>;
  /**
   * Whether the resource `uri` names may be watched by this caller where it leads: a provider
   * whose URIs can lead elsewhere (a symlink) judges `ctx.allows` on the target, as its read does.
   * Asked for each subscriber while access rules are in force (watches are shared per URI).
   */
  reachable?(uri: string, ctx: CallContext): boolean | Promise<boolean>;
  /**
   * Calls `listener` with the resources that were added, changed or removed anywhere in the source,
   * once settled — the detection behind `watch`, for the whole tree. A source that cannot tell which
   * (a git ref moved) reports its root as a container. Resolves with the function that stops it.
   * Consumers that keep derived state use it: the search index (without it, the index follows
   * `onListChanged`) and skills catalogs.
   */
  onChanges?(listener: (changes: ResourceChange[]) => void): (() => void) | Promise<() => void>;
  /**
   * Text for the search index that `list` and `read` do not give: e.g. a SQL source's named queries
   * (name, description and SQL), including those that need parameters and are only templates. A
   * document whose URI `list` also returns is indexed with this text beside what `read` returns;
   * the others with this text alone. Asked whenever the index reconciles the source.
   */
  searchDocuments?(ctx: CallContext): SearchDocument[] | Promise<SearchDocument[]>;
  /** Calls `listener` when resources are added or removed; resolves with the function that stops it. */
  onListChanged?(listener: () => void): (() => void) | Promise<() => void>;
  /**
   * The direct children of the directory `uri` names (normalised, routed here), at most `limit`,
   * sorted by name and resuming strictly after the name `after`; under the same containment and
   * access rules as `read` (`ctx.allows` judges each child named). Throws NotFoundError when `uri`
   * names nothing or no directory. Serves `resources/directory/read` and skills catalogs.
   */
  readDirectory?(
    uri: string,
    after: string | undefined,
    limit: number,
    ctx: CallContext,
  ): Promise<DirectoryPage>;
  /** Resolves when the source can answer now; throws (an UnavailableError) when it cannot. For /readyz. */
  ready?(): Promise<void>;
  /**
   * Asks the backend once whether it answers, for `reservoir check --connect`, where a check too
   * costly for every /readyz is fine (an HTTP API: a request to its upstream); throws why it cannot.
   * Without it, `--connect` asks `ready()`, else a one-item list.
   */
  connect?(signal: AbortSignal): Promise<void>;
  /**
   * A check of the source's configuration against what its backend says, asked once when
   * `reservoir serve` starts: resolves with why the source cannot work as declared (a ConfigError
   * `ready()` then throws too, e.g. a SQL role `sql_query` refuses), or undefined. It throws when the
   * backend cannot answer (that is `ready()`'s to report).
   */
  misconfigured?(): Promise<string | undefined>;
  close?(): Promise<void>;
}

/** A typed factory: validates its options when called and returns ready providers. */
export type ProviderFactory<Options> = (options: Options) => Provider | Promise<Provider>;
