/**
 * The identified server, wired to the client log router (client-log.ts) when logging is on: every
 * request handler runs with its request's log sink, `logging/setLevel` (2025 era) records the
 * connection's level and registers the connection for records made outside any request, and a
 * closed connection is unregistered. The SDK's own `logging/setLevel` still runs (tools' `ctx.log`
 * filters by it).
 */
import {
  LOG_LEVEL_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  type Implementation,
  type ServerContext,
  type ServerOptions,
} from '@modelcontextprotocol/server';
import type { Principal } from '../core/principal.js';
import {
  isMcpLogLevel,
  type ClientLogRouter,
  type LogSink,
  type McpLogLevel,
} from './client-log.js';
import { principalOf } from './guarded-call.js';
import { IdentifiedServer } from './identity.js';

type Handler = (
  request: { method: string; params?: unknown },
  ctx: ServerContext,
) => Promise<unknown>;

export class LoggingServer extends IdentifiedServer {
  /** The level this (2025-era) connection set; undefined until it sets one. */
  private level: McpLogLevel | undefined;
  private connectionPrincipal: Principal | undefined;
  private removeConnection: (() => void) | undefined;

  constructor(
    identity: Implementation,
    options: ServerOptions | undefined,
    private readonly router: ClientLogRouter | undefined,
    private readonly era: 'legacy' | 'modern',
  ) {
    super(identity, options);
  }

  protected override _wrapHandler(
    method: string,
    handler: Parameters<IdentifiedServer['_wrapHandler']>[1],
  ): ReturnType<IdentifiedServer['_wrapHandler']> {
    const inner = super._wrapHandler(method, handler) as unknown as Handler;
    // The constructor registers `logging/setLevel` before the router field is set: decide per call.
    const wrapped: Handler = (request, ctx) => {
      const router = this.router;
      if (router === undefined) return inner(request, ctx);
      if (method === 'logging/setLevel') this.setLevel(router, request, ctx);
      return router.inRequest(this.requestSink(ctx), () => inner(request, ctx));
    };
    return wrapped as unknown as ReturnType<IdentifiedServer['_wrapHandler']>;
  }

  /**
   * Runs `work` as a request of `principal` on this connection that is answered without the SDK's
   * dispatch (mcp/direct/): the records it makes go where a handler's would — on a 2025-era
   * connection, to its client at the level the connection set.
   */
  asRequest<T>(principal: Principal, work: () => T): T {
    const router = this.router;
    if (router === undefined) return work();
    return router.inRequest(
      {
        threshold: () => (this.era === 'legacy' ? this.level : undefined),
        principal: () => principal,
        send: (level, data) =>
          this.notification({
            method: 'notifications/message',
            params: { level, logger: 'reservoir', data },
          }),
      },
      work,
    );
  }

  /**
   * A `tools/call` result as the SDK's handler wrapper (Server._wrapHandler) validates it for this
   * connection's era — the same schema pass (which also fixes the answer's member order) and the
   * same error — for a call answered without the SDK's dispatch (mcp/direct-tools.ts).
   */
  validatedToolResult(result: unknown): Record<string, unknown> {
    const outcome = this._wireCodec().validateResult('tools/call', result);
    if (outcome.ok) return outcome.value as Record<string, unknown>;
    if (outcome.reason === 'not-in-era')
      throw new ProtocolError(
        ProtocolErrorCode.InternalError,
        'No wire schema for tools/call in the resolved era',
      );
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Invalid tools/call result: ${outcome.message}`,
    );
  }

  protected override _onclose(): void {
    this.removeConnection?.();
    this.removeConnection = undefined;
    super._onclose();
  }

  private requestSink(ctx: ServerContext): LogSink {
    return {
      threshold: () => {
        if (this.era === 'legacy') return this.level;
        const asked = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[
          LOG_LEVEL_META_KEY
        ];
        return isMcpLogLevel(asked) ? asked : undefined;
      },
      principal: () => principalOf(ctx),
      send: (level, data) =>
        ctx.mcpReq.notify({
          method: 'notifications/message',
          params: { level, logger: 'reservoir', data },
        }),
    };
  }

  private setLevel(
    router: ClientLogRouter,
    request: { params?: unknown },
    ctx: ServerContext,
  ): void {
    const level = (request.params as { level?: unknown } | undefined)?.level;
    if (!isMcpLogLevel(level)) return; // the SDK's handler refuses it
    this.level = level;
    this.connectionPrincipal = principalOf(ctx);
    this.removeConnection ??= router.addConnection({
      threshold: () => this.level,
      principal: () => this.connectionPrincipal ?? principalOf(ctx),
      send: (sent, data) =>
        this.notification({
          method: 'notifications/message',
          params: { level: sent, logger: 'reservoir', data },
        }),
    });
  }
}
