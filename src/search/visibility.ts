/**
 * What a search shows its caller, as access control decides it (core/access-control.ts): the part
 * of the index the caller's search is narrowed to before matching (scope.ts: ranges derived from
 * the rules, which only narrow), the indexed sources it may name (`source:`, errors), and each
 * candidate hit, judged as a read and a list of it are before it is shown, counted or quoted.
 */
import type { AccessControl } from '../core/access-control.js';
import { isReservoirError } from '../core/errors.js';
import type { Principal } from '../core/principal.js';
import type { CallContext, Provider } from '../core/types.js';
import { scopeOf, type Scope } from './scope.js';

export class SearchVisibility {
  constructor(
    private readonly access: AccessControl,
    private readonly mounts: readonly Provider[],
  ) {}

  /** What of the index `principal` may see, from the access rules that apply to it. */
  scope(principal: Principal | undefined): Scope {
    return scopeOf(
      principal === undefined ? undefined : this.access.rulesFor(principal),
      this.mounts.map((m) => m.root),
    );
  }

  /** The indexed sources `principal` may reach anything in: all that `source:` names and errors mention. */
  sources(principal: Principal | undefined): Provider[] {
    const roots = new Set(this.access.visibleRoots(principal));
    return this.mounts.filter((m) => roots.has(m.root));
  }

  /** Whether the hit at the listed URI `uri` may be shown to the caller of `ctx`; a URI that cannot be judged now is not. */
  async shows(uri: string, ctx: CallContext): Promise<boolean> {
    try {
      return await this.access.findable(ctx.principal, uri, ctx);
    } catch (error) {
      if (isReservoirError(error)) return false;
      throw error;
    }
  }
}
