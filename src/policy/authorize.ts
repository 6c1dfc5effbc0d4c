/**
 * The `authorize` slot: the operation-level access decision, made by access control
 * (core/access-control.ts) before the handler runs. A call addressed by name — `tools/call`,
 * `prompts/get` — that the principal may not use is refused here, and its refusal is the one an
 * unknown name gets (`unknown tool`, `no prompt named`), so a denied name reads as a missing one.
 *
 * The refusal is answered where the handler would have run (`PolicyContext.refuse`): the
 * rate-limit, concurrency and deadline steps inside this slot run as for any call, so a refused
 * name costs a caller's budget exactly what an unknown one does and no budget count tells them
 * apart. Decisions about resources need the owning provider (a URI is judged by the resource it
 * names), so they are made under the deadline, by the Registry asking the same access control.
 */
import type { AccessControl, NamedKind } from '../core/access-control.js';
import { InvalidArgumentError } from '../core/errors.js';
import type { PolicyStep } from './index.js';

/** The MCP methods addressed by the name of a prompt or tool, and how an unknown name is refused. */
const BY_NAME: Readonly<
  Record<string, { kind: NamedKind; refusal: (name: string) => InvalidArgumentError }>
> = {
  'tools/call': {
    kind: 'tools',
    refusal: (name) => new InvalidArgumentError('name', `unknown tool '${name}'`),
  },
  'prompts/get': {
    kind: 'prompts',
    refusal: (name) => new InvalidArgumentError('name', `no prompt named '${name}'`),
  },
};

/** Refuses calls of prompts and tools `access` does not let the principal use (see the module comment). */
export function authorizeStep(access: AccessControl): PolicyStep {
  return {
    slot: 'authorize',
    run(ctx, next) {
      const named = BY_NAME[ctx.method];
      if (
        named !== undefined &&
        ctx.target !== undefined &&
        !access.mayUse(ctx.principal, named.kind, ctx.target)
      ) {
        ctx.refuse(named.refusal(ctx.target));
      }
      return next();
    },
  };
}
