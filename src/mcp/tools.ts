/**
 * `tools/list` and `tools/call`. An unknown tool and a malformed request (`name` missing,
 * `arguments` not an object: params.ts) are protocol errors (-32602). Arguments that fail the
 * tool's input schema are an `isError` result naming the argument, as the spec says (2025-11-25 and
 * 2026-07-28: input validation errors are tool execution errors, so the model can correct itself).
 * A tool's own failure is an `isError` result whose text a model can act on, except a missing client
 * capability, which is a protocol error (-32021) by the spec. A tool may answer `inputRequired()`
 * (multi-round-trip input; see input.ts).
 */
import type {
  CallToolResult,
  InputRequiredResult,
  ProtocolEra,
  Server,
  Tool as WireTool,
} from '@modelcontextprotocol/server';
import type { BlobCaps } from '../core/blob-caps.js';
import type { Catalog } from '../core/named-items.js';
import { capToolResult, readerOf } from './blob-cap-check.js';
import { InvalidArgumentError, isReservoirError } from '../core/errors.js';
import { isInputRequired, type InputContext, type InputRequired } from '../core/input.js';
import type { Registry } from '../core/registry.js';
import {
  checkToolArguments,
  toolSchemas,
  type Tool,
  type ToolContext,
  type ToolResult,
} from '../core/tools.js';
import type { PolicyContext } from '../policy/index.js';
import { offerDirectToolCalls } from './direct-tools.js';
import { guarded, type Guard } from './guarded-call.js';
import { LoggingServer } from './logging-server.js';
import { TOOL_ICONS } from './inline-icons.js';
import { inputContext, toWireInputRequired, type StateCodec } from './input.js';
import { PROTOCOL_VERSION_META_KEY } from './listen-admission.js';
import { definedProps } from '../core/defined.js';

/** The first revision that has `resource_link` content blocks; a client on an earlier one does not know them. */
export const RESOURCE_LINK_REVISION = '2025-06-18';

export function installToolHandlers(
  server: Server,
  tools: Catalog<Tool>,
  registry: Registry,
  guard: Guard,
  codec: StateCodec,
  blobCaps: BlobCaps | undefined,
  era: ProtocolEra,
): void {
  // JSON Schemas are derived once per tool object and reused across requests and instances.
  const schemas = new WeakMap<Tool, ReturnType<typeof toolSchemas>>();
  const schemaOf = (tool: Tool): ReturnType<typeof toolSchemas> => {
    let found = schemas.get(tool);
    if (found === undefined) {
      found = toolSchemas(tool);
      schemas.set(tool, found);
    }
    return found;
  };

  server.setRequestHandler('tools/list', (request, handlerCtx) =>
    guarded(guard, handlerCtx, 'tools/list', undefined, async (call) => {
      const capabilities = inputContext(server, handlerCtx).clientCapabilities;
      const offered = tools
        .all()
        .filter((tool) => tool.offeredTo === undefined || tool.offeredTo(capabilities));
      const page = registry.pageByName('tools', offered, request.params?.cursor, {
        principal: call.principal,
      });
      const described = page.items.map((tool): WireTool => ({
        name: tool.name,
        ...definedProps({ title: tool.title }),
        description: tool.description,
        ...(schemaOf(tool) as Pick<WireTool, 'inputSchema' | 'outputSchema'>),
        ...definedProps({ annotations: tool.annotations }),
        icons: tool.icons ?? TOOL_ICONS,
        ...definedProps({ _meta: tool.meta }),
      }));
      return page.nextCursor === undefined
        ? { tools: described }
        : { tools: described, nextCursor: page.nextCursor };
    }),
  );

  const callTool = toolCall(server, tools, registry, guard, blobCaps, schemaOf);
  server.setRequestHandler('tools/call', (request, handlerCtx) =>
    guarded(guard, handlerCtx, 'tools/call', request.params.name, (call) => {
      const progressToken = request.params._meta?.progressToken;
      return callTool(call, {
        name: request.params.name,
        arguments: request.params.arguments,
        envelope: handlerCtx.mcpReq.envelope,
        input: inputContext(server, handlerCtx),
        progress: async (progress, total, message) => {
          if (progressToken === undefined) return;
          await handlerCtx.mcpReq.notify({
            method: 'notifications/progress',
            params: {
              progressToken,
              progress,
              ...definedProps({ total, message }),
            },
          });
        },
        log: (level, data) => handlerCtx.mcpReq.log(level, data),
        inputRequired: (answer) => toWireInputRequired(answer, codec, handlerCtx),
      });
    }),
  );
  if (era === 'legacy' && guard.tracer === undefined && server instanceof LoggingServer)
    offerDirectToolCalls(server, tools, guard, callTool);
}

/**
 * One round of a `tools/call`, whichever path brought it: the SDK's handler (above), or the stdio
 * wire's direct answer of a plain 2025-era call (direct-tools.ts). What differs between the two is
 * only what the request carries and how the round talks back to its client.
 */
export interface ToolCallRound {
  name: string;
  arguments: unknown;
  /** The 2026-07-28 request envelope (`_meta`); undefined on a 2025-era request. */
  envelope: unknown;
  input: InputContext;
  progress: ToolContext['progress'];
  log: ToolContext['log'];
  /** The wire form of a tool's `inputRequired(...)` (its state sealed). */
  inputRequired(answer: InputRequired): Promise<InputRequiredResult>;
}

/** Runs a round as `call` (already inside the guard): the tool's result as the handler returns it. */
export type ToolCall = (
  call: PolicyContext,
  round: ToolCallRound,
) => Promise<CallToolResult | InputRequiredResult>;

/** THE body of the `tools/call` handler, for both paths. */
function toolCall(
  server: Server,
  tools: Catalog<Tool>,
  registry: Registry,
  guard: Guard,
  blobCaps: BlobCaps | undefined,
  schemaOf: (tool: Tool) => ReturnType<typeof toolSchemas>,
): ToolCall {
  return async (call, round) => {
    const tool = tools.get(round.name);
    const offered = tool?.offeredTo === undefined || tool.offeredTo(round.input.clientCapabilities);
    if (tool === undefined || !offered || !registry.access.mayUseTool(call.principal, tool)) {
      throw new InvalidArgumentError('name', `unknown tool '${round.name}'`);
    }
    let args: unknown;
    try {
      args = checkToolArguments(tool, round.arguments);
    } catch (error) {
      if (!(error instanceof InvalidArgumentError)) throw error;
      call.failure = error.code;
      return argumentError(tool, error);
    }
    const ctx: ToolContext = {
      ...round.input,
      signal: call.signal,
      principal: call.principal,
      progress: round.progress,
      log: round.log,
      audit: ({ uri, code, bytes }) => {
        if (uri !== undefined) call.resource = uri;
        if (code !== undefined) call.failure = code;
        if (bytes !== undefined) call.bytes = bytes;
      },
    };
    let result: ToolResult | InputRequired;
    try {
      result = await tool.call(args as never, ctx);
    } catch (error) {
      // A missing client capability is a protocol error by the spec; any other failure is a result.
      if (isReservoirError(error) && error.code === 'missing_capability') throw error;
      if (!isReservoirError(error))
        guard.logger.error({ err: error, tool: tool.name }, 'tool failed');
      const message = isReservoirError(error)
        ? error.message
        : `The tool '${tool.name}' failed unexpectedly.`;
      call.failure ??= isReservoirError(error) ? error.code : 'internal';
      result = { content: [{ type: 'text', text: message }], isError: true };
    }
    if (isInputRequired(result)) return round.inputRequired(result);
    if (blobCaps !== undefined)
      result = capToolResult(result, blobCaps, readerOf(server, round.envelope, call.principal));
    if (!knowsResourceLinks(revisionOf(server, round.envelope)))
      result = {
        ...result,
        content: result.content.filter((block) => block.type !== 'resource_link'),
      };
    return server.projectCallToolResult(
      { ...result } as CallToolResult,
      schemaOf(tool).outputSchema,
    );
  };
}

/** The `isError` result for arguments the tool's schema refused: which one, why, and what to do. */
function argumentError(tool: Tool, error: InvalidArgumentError): CallToolResult {
  const argument = String(error.data['argument']);
  const reason = String(error.data['reason']);
  const text =
    argument === 'arguments'
      ? `Invalid arguments for ${tool.name}: ${reason}. Call ${tool.name} again with arguments that match its input schema.`
      : `Invalid argument '${argument}' for ${tool.name}: ${reason}. Call ${tool.name} again with a corrected '${argument}'.`;
  return { content: [{ type: 'text', text }], isError: true };
}

/**
 * The revision a request was sent for: the 2026-07-28 envelope names it on every request; a
 * 2025-era connection keeps the version negotiated at `initialize`.
 */
function revisionOf(server: Server, envelope: unknown): string | undefined {
  const named = (envelope as Record<string, unknown> | undefined)?.[PROTOCOL_VERSION_META_KEY];
  return typeof named === 'string' ? named : server.getNegotiatedProtocolVersion();
}

/** Whether a client on `revision` knows `resource_link` blocks (revisions are dates, so they order as strings). */
export function knowsResourceLinks(revision: string | undefined): boolean {
  return revision !== undefined && revision >= RESOURCE_LINK_REVISION;
}
