/**
 * Where every access decision is made. The rules (`access.ts`) say what a principal may do to a
 * URI as spelled; this module applies them to what is served: it judges a client URI by the
 * resource it names (its canonical URI, resolved by the owning provider), and decides which mount
 * roots, templates, completion values, prompts, tools, listed resources and search candidates a
 * principal may see. The Registry serves resources and asks here; the policy's `authorize` step
 * asks here for calls addressed by name; subscriptions, search and tools ask here too. Nothing else
 * judges a rule.
 *
 * Without rules in force, and for the local principal, everything is allowed. A resource the
 * principal may not reach is answered by the callers exactly like a missing one.
 */
import type { AccessPolicy, AccessRule, Operation } from './access.js';
import { NotFoundError } from './errors.js';
import type { Principal } from './principal.js';
import type { CallContext, Provider, ResourceTemplateInfo } from './types.js';
import { parseUri } from './uri.js';
import { definedProps } from './defined.js';

/** For checks that read nothing and cannot be cancelled. */
const NEVER_ABORTED = new AbortController().signal;

/** What access control needs of the mount table: routing and the mounts (the Registry is one). */
export interface MountTable {
  route(href: string): Provider | undefined;
  providers(): readonly Provider[];
}

/** Whether a completion value that expands to `uri` (a container when `container`) may be shown. */
export type CompletionJudge = (uri: string, container: boolean) => Promise<boolean>;

/** The kinds of things offered by name; rules name them `prompt:<name>` and `tool:<name>`. */
export type NamedKind = 'prompts' | 'tools';

export class AccessControl {
  private policy: AccessPolicy | undefined;

  constructor(
    private readonly mounts: MountTable,
    policy?: AccessPolicy,
  ) {
    this.policy = policy;
  }

  /** Replaces the rules (a config reload); undefined allows everything. */
  set(policy: AccessPolicy | undefined): void {
    this.policy = policy;
  }

  /** Whether rules are in force (answers then depend on who asks: cacheScope private). */
  get restricted(): boolean {
    return this.policy !== undefined;
  }

  /** The rules in force for `principal` (for `who_am_i` and search's ranges); undefined when none are. */
  rulesFor(principal: Principal): { default: 'allow' | 'deny'; rules: AccessRule[] } | undefined {
    if (principal.kind === 'local') return undefined;
    return this.policy?.rulesFor(principal);
  }

  /** Whether `principal` may perform `operation` on the normalised `uri` as spelled (a listed URI, a name). */
  allows(principal: Principal | undefined, operation: Operation, uri: string): boolean {
    return this.policy?.allows(principal, operation, uri) ?? true;
  }

  /** Whether `principal` may reach anything under the normalised URI prefix `prefix`. */
  mayReachUnder(principal: Principal | undefined, operation: Operation, prefix: string): boolean {
    return this.policy?.mayReachUnder(principal, operation, prefix) ?? true;
  }

  /** Whether a list may show `principal` the resource at the listed URI `uri`. */
  listed(principal: Principal | undefined, uri: string): boolean {
    return this.allows(principal, 'list', uri);
  }

  /**
   * The call context a provider gets: with an `allows` check while rules apply to this principal,
   * so a provider judges what it reveals about other URIs (a symlink's target, a directory's children).
   */
  providerContext(ctx: CallContext): CallContext {
    const policy = this.policy;
    const principal = ctx.principal;
    if (policy === undefined || principal === undefined || principal.kind === 'local') return ctx;
    return {
      // Read through: the signal may be made only when first used (see the deadline step).
      get signal() {
        return ctx.signal;
      },
      principal,
      allows: (operation, uri, container) =>
        container === true
          ? policy.mayReachUnder(principal, operation, parseUri(uri).href)
          : policy.allows(principal, operation, parseUri(uri).href),
    };
  }

  /**
   * The canonical-resource check, for every URI a client supplies: whether `principal` may perform
   * `operation` on the resource the normalised `href` names. The owning provider resolves it to its
   * canonical URI (see `Provider.canonical`) and the rules judge that and the spelling
   * (`AccessPolicy.decide`), so `…/file.txt/`, `…/file.txt?lines=1-` and `…/rows?limit=5` get the
   * answer their resource gets. False for a URI no provider owns or that names nothing; a malformed
   * one throws the provider's InvalidArgumentError (which says nothing about existence). Reads (and
   * through them tools and prompt embeddings), directory reads, subscriptions, listen and each
   * search candidate ask here.
   */
  async admits(
    principal: Principal | undefined,
    operation: Operation,
    href: string,
    ctx?: CallContext,
  ): Promise<boolean> {
    const provider = this.mounts.route(href);
    if (provider === undefined) return false;
    const policy = this.policy;
    if (policy === undefined || principal === undefined || principal.kind === 'local') return true;
    // A spelling denied by name is refused before the provider is asked anything.
    if (policy.denies(principal, operation, href)) return false;
    const canonical = await this.canonicalOf(
      provider,
      href,
      ctx ?? { signal: NEVER_ABORTED, principal },
    );
    return canonical !== undefined && policy.decide(principal, operation, href, canonical);
  }

  /**
   * Whether a search may show `principal` the candidate at the listed URI `href`: it may read it and
   * it may list it, so a list-only deny hides a folder from search as it does from lists.
   */
  async findable(
    principal: Principal | undefined,
    href: string,
    ctx?: CallContext,
  ): Promise<boolean> {
    return this.listed(principal, href) && (await this.admits(principal, 'read', href, ctx));
  }

  /**
   * Whether `principal` may subscribe to the normalised `href`: the resource it names, and where it
   * leads (a provider's symlink target, judged by `Provider.reachable` under the principal's rules).
   */
  async subscribable(principal: Principal | undefined, href: string): Promise<boolean> {
    if (!(await this.admits(principal, 'subscribe', href))) return false;
    const provider = this.mounts.route(href);
    if (provider?.reachable === undefined) return true;
    const call = this.providerContext({
      signal: NEVER_ABORTED,
      ...definedProps({ principal }),
    });
    return call.allows === undefined ? true : provider.reachable(href, call);
  }

  /** The mount roots `principal` may list or read anything under, in mount order: all that a message to them may name. */
  visibleRoots(principal: Principal | undefined): string[] {
    return this.mounts
      .providers()
      .map((p) => p.root)
      .filter(
        (root) =>
          this.mayReachUnder(principal, 'list', root) ||
          this.mayReachUnder(principal, 'read', root),
      );
  }

  /** A template is shown to a principal that may read something under its literal beginning. */
  templateVisible(principal: Principal | undefined, template: ResourceTemplateInfo): boolean {
    if (this.policy === undefined) return true;
    const brace = template.uriTemplate.indexOf('{');
    const prefix = brace < 0 ? template.uriTemplate : template.uriTemplate.slice(0, brace);
    return this.mayReachUnder(principal, 'read', prefix);
  }

  /** Whether `principal` may see and use the prompt or tool `name`. */
  mayUse(principal: Principal | undefined, kind: NamedKind, name: string): boolean {
    return this.allows(principal, kind, `${kind === 'prompts' ? 'prompt' : 'tool'}:${name}`);
  }

  /**
   * Whether `principal` may see and call `tool`: its name allowed (`tool:<name>`) and, for a tool
   * that can read anything under a root whatever it is asked (`Tool.reads`: a query tool over a
   * database), every resource there readable — a deny of one table keeps away the tool that could
   * query it.
   */
  mayUseTool(principal: Principal | undefined, tool: { name: string; reads?: string }): boolean {
    return (
      this.mayUse(principal, 'tools', tool.name) &&
      (tool.reads === undefined ||
        this.policy?.mayReachAllUnder(principal, 'read', parseUri(tool.reads).href) !== false)
    );
  }

  /** The prompts or tools of `all` that `principal` may see and use (a tool also as `mayUseTool` judges it). */
  usable<T extends { name: string; reads?: string }>(
    principal: Principal | undefined,
    kind: NamedKind,
    all: readonly T[],
  ): readonly T[] {
    if (this.policy === undefined) return all;
    return all.filter((item) =>
      kind === 'tools' ? this.mayUseTool(principal, item) : this.mayUse(principal, kind, item.name),
    );
  }

  /**
   * How completion values of a template of `owner` are judged for the caller of `ctx`, or undefined
   * when every value may be shown. A value is judged as the URI it completes to and as the resource
   * that URI names (its canonical URI, by `owner` only): a value at another ref or in another
   * spelling of a denied file is left out like the file itself; a container value is judged under
   * its spelling and under the container its resource is.
   */
  completionJudge(owner: Provider, ctx: CallContext): CompletionJudge | undefined {
    const policy = this.policy;
    const principal = ctx.principal;
    if (policy === undefined || principal === undefined || principal.kind === 'local')
      return undefined;
    const canonical = async (href: string): Promise<readonly string[] | undefined> =>
      this.mounts.route(href) === owner ? this.canonicalOf(owner, href, ctx) : undefined;
    return async (uri, container) => {
      if (container) {
        if (!policy.mayReachUnder(principal, 'complete', uri)) return false;
        const resolved = (await canonical(uri.slice(0, -1))) ?? [];
        return resolved.every((c) =>
          policy.mayReachUnder(principal, 'complete', c.endsWith('/') ? c : `${c}/`),
        );
      }
      return policy.decide(principal, 'complete', uri, (await canonical(uri)) ?? [uri]);
    };
  }

  /** The canonical URIs of `href` by its provider (`[href]` without `canonical`); undefined when it names nothing. */
  private async canonicalOf(
    provider: Provider,
    href: string,
    ctx: CallContext,
  ): Promise<readonly string[] | undefined> {
    if (provider.canonical === undefined) return [href];
    try {
      const resolved = await provider.canonical(href, this.providerContext(ctx));
      return (typeof resolved === 'string' ? [resolved] : resolved).map(
        (uri) => parseUri(uri).href,
      );
    } catch (error) {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    }
  }
}
