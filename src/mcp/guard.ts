/**
 * The one way a handler runs its work: as the request's principal, through the policy steps
 * (audit, rate limits, concurrency, deadline — in their fixed order), with every error mapped to
 * JSON-RPC once. The principal comes from the authenticated request (HTTP) or is the local user.
 */
import type { AuthInfo, ServerContext } from '@modelcontextprotocol/server';
import type { Logger } from '../core/log.js';
import { LOCAL_PRINCIPAL, type Principal } from '../core/principal.js';
import { PolicyContext, type Policy } from '../policy/index.js';
import { toProtocolError } from './errors.js';

export interface Guard {
  policy: Policy;
  logger: Logger;
  /** Traces each operation (cluster mode, or when the embedder asks): a span around the policy and the work. */
  tracer?: OperationTracer;
}

/** One span per MCP operation, continuing the caller's W3C trace context (cluster/tracing.ts). */
export interface OperationTracer {
  operation<T>(op: { method: string; target: string | undefined; principal: Principal; carrier: Record<string, string> }, work: () => Promise<T>): Promise<T>;
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

export async function guarded<T>(
  guard: Guard,
  handlerCtx: ServerContext,
  method: string,
  target: string | undefined,
  work: (ctx: PolicyContext) => Promise<T>,
): Promise<T> {
  const ctx = new PolicyContext({ principal: principalOf(handlerCtx), method, target, signal: handlerCtx.mcpReq.signal });
  try {
    if (guard.tracer !== undefined) {
      return await guard.tracer.operation({ method, target, principal: ctx.principal, carrier: traceCarrier(handlerCtx) }, () => guard.policy(ctx, work));
    }
    return await guard.policy(ctx, work);
  } catch (error) {
    throw toProtocolError(error, guard.logger);
  }
}
