/**
 * The one way a handler runs its work: as the request's principal, through the policy steps
 * (audit, rate limits, concurrency, deadline — in their fixed order), with every error mapped to
 * JSON-RPC once. The principal comes from the authenticated request (HTTP) or is the local user.
 */
import type { AuthInfo, ServerContext } from '@modelcontextprotocol/server';
import type { CallerSignal } from '../core/cancellation.js';
import type { Logger } from '../core/log.js';
import { LOCAL_PRINCIPAL, type Principal } from '../core/principal.js';
import { PolicyContext, type Policy } from '../policy/index.js';
import { toProtocolError } from './errors.js';

export interface Guard {
  policy: Policy;
  logger: Logger;
  /** Traces each operation (cluster mode, or when the embedder asks): a span around the policy and the work. */
  tracer?: OperationTracer | undefined;
}

/** One span per MCP operation, continuing the caller's W3C trace context (cluster/tracing.ts). */
export interface OperationTracer {
  operation<T>(
    op: {
      method: string;
      target: string | undefined;
      principal: Principal;
      carrier: Record<string, string>;
    },
    work: () => Promise<T>,
  ): Promise<T>;
}

/** The W3C trace context a request carries: `_meta.traceparent`/`tracestate` first, else its HTTP headers. */
function traceCarrier(handlerCtx: ServerContext): Record<string, string> {
  const carrier: Record<string, string> = {};
  const meta = handlerCtx.mcpReq._meta as Record<string, unknown> | undefined;
  const headers = handlerCtx.http?.req?.headers;
  for (const key of ['traceparent', 'tracestate']) {
    const value = meta?.[key] ?? headers?.get(key) ?? undefined;
    if (typeof value === 'string' && value.length <= 512) carrier[key] = value;
  }
  return carrier;
}

/** The principal the HTTP layer attached to a request's auth info (`extra.principal`), if any. */
export function principalOfAuth(authInfo: AuthInfo | undefined): Principal | undefined {
  const principal = authInfo?.extra?.['principal'];
  return principal !== null && typeof principal === 'object' ? (principal as Principal) : undefined;
}

/** Who sent the request: the principal the HTTP layer attached, or the local user (stdio). */
export function principalOf(handlerCtx: ServerContext): Principal {
  return principalOfAuth(handlerCtx.http?.authInfo) ?? LOCAL_PRINCIPAL;
}

export function guarded<T>(
  guard: Guard,
  handlerCtx: ServerContext,
  method: string,
  target: string | undefined,
  work: (ctx: PolicyContext) => Promise<T>,
): Promise<T> {
  return guardedAs(
    guard,
    {
      principal: principalOf(handlerCtx),
      signal: handlerCtx.mcpReq.signal,
      carrier: () => traceCarrier(handlerCtx),
    },
    method,
    target,
    work,
  );
}

/** Who a request runs as and what it carries, for work that runs without an SDK handler context. */
export interface Caller {
  principal: Principal;
  signal: CallerSignal;
  /** The W3C trace context, asked for only when tracing. */
  carrier: () => Record<string, string>;
}

/** `guarded` for a caller given directly (the HTTP endpoint's direct read answers). */
export async function guardedAs<T>(
  guard: Guard,
  caller: Caller,
  method: string,
  target: string | undefined,
  work: (ctx: PolicyContext) => Promise<T>,
): Promise<T> {
  const ctx = new PolicyContext({
    principal: caller.principal,
    method,
    target,
    signal: caller.signal,
  });
  try {
    if (guard.tracer !== undefined) {
      return await guard.tracer.operation(
        { method, target, principal: ctx.principal, carrier: caller.carrier() },
        () => guard.policy(ctx, work),
      );
    }
    return await guard.policy(ctx, work);
  } catch (error) {
    throw toProtocolError(error, guard.logger);
  }
}
