/**
 * A 2025-era server instance's `tools/call`, offered for a caller given directly: the stdio wire
 * answers a plain call with it without the SDK's dispatch (mcp/direct/tools.ts). It runs THE body
 * of the handler (tools.ts `ToolCall`) — the same tool lookup, argument check, audit facts, failure
 * results, blob caps, resource_link filtering by revision and structuredContent projection — inside
 * the same guard, as the caller, with the records it makes routed as a handler's
 * (LoggingServer.asRequest). What differs is only what the SDK's dispatch would have added around it:
 *
 * - the round's input context is the one a plain 2025-era request has (the capabilities declared
 *   at `initialize`, no earlier answers, no state);
 * - no progress is sent (a plain request has no progress token, so the handler sends none either);
 * - `ctx.log` goes through the server's `sendLoggingMessage`, the same level check and notification
 *   the SDK's `ctx.mcpReq.log` makes on a 2025-era connection;
 * - the result passes the SDK's own validation for the era (LoggingServer.validatedToolResult).
 *
 * Only tools declared to answer in one round (core/tools.ts `answeringInOneRound`) — and names no
 * tool has, which the body refuses as the handler does — are taken: a tool's `inputRequired(...)`
 * is served on a 2025-era connection by the SDK's shim (real requests to the client, then the tool
 * again), which a direct answer cannot do.
 */
import { ProtocolError, ProtocolErrorCode, type Server } from '@modelcontextprotocol/server';
import type { Catalog } from '../core/named-items.js';
import { answersInOneRound, type Tool } from '../core/tools.js';
import { guardedAs, type Caller, type Guard } from './guarded-call.js';
import { inputContextOf } from './input.js';
import type { LoggingServer } from './logging-server.js';
import type { ToolCall } from './tools.js';

/** What a 2025-era server answers to `tools/call`, for a caller given directly. */
export interface LegacyToolCaller {
  /** Whether a call of `name` may be answered here: a one-round tool, or a name no tool has. */
  takes(name: string): boolean;
  /** Calls `name` as `caller` (through the guard; errors mapped as a handler's): the validated result. */
  call(caller: Caller, name: string, args: unknown): Promise<Record<string, unknown>>;
}

const callers = new WeakMap<Server, LegacyToolCaller>();

/**
 * The `tools/call` of a 2025-era server instance when it may be answered without its SDK dispatch:
 * undefined for a 2026-07-28 instance, or one that traces its operations (the trace context is the
 * SDK path's).
 */
export function legacyToolCaller(server: Server): LegacyToolCaller | undefined {
  return callers.get(server);
}

const noProgress = (): Promise<void> => Promise.resolve();
const noState = <T>(): T | undefined => undefined;

/** Offers `server`'s `tools/call` (its handler's body, `callTool`) to the direct path. */
export function offerDirectToolCalls(
  server: LoggingServer,
  tools: Catalog<Tool>,
  guard: Guard,
  callTool: ToolCall,
): void {
  callers.set(server, {
    takes: (name) => {
      const tool = tools.get(name);
      return tool === undefined || answersInOneRound(tool);
    },
    call: (caller, name, args) =>
      server.asRequest(caller.principal, () =>
        guardedAs(guard, caller, 'tools/call', name, (call) =>
          callTool(call, {
            name,
            arguments: args,
            envelope: undefined,
            input: inputContextOf(server, undefined, undefined, noState),
            progress: noProgress,
            log: (level, data) => server.sendLoggingMessage({ level, data }),
            inputRequired: () =>
              Promise.reject(
                new ProtocolError(
                  ProtocolErrorCode.InternalError,
                  `The tool '${name}' is declared to answer in one round but asked for input`,
                ),
              ),
          }),
        ).then((result) => server.validatedToolResult(result)),
      ),
  });
}
