/**
 * Tools: model-invoked functions. Input (and optional output) is described by a zod schema, from
 * which the JSON Schemas in `tools/list` are derived; arguments are validated before the handler
 * runs, and a bad one is an `isError` result naming it (the MCP edge turns the error into one). A handler's own failure is not a protocol
 * error: it becomes an `isError` result with a message a model can act on.
 */
import { z } from 'zod';
import { ConfigError, InvalidArgumentError } from './errors.js';
import { portableOutputSchema, portableSchema, withoutNulls } from './portable-schema.js';
import type { InputContext, InputRequired } from './input.js';
import type { ClientCapabilities } from './input.js';
import type { CallContext, ContentBlock, Icon } from './types.js';

export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export type LogLevel =
  'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency';

/**
 * What a tool handler gets besides its arguments: cancellation, progress, logging, and (from
 * InputContext) the client's capabilities and its answers to a previous `inputRequired()` round.
 */
export interface ToolContext extends CallContext, InputContext {
  /** Reports progress to a client that asked for it (a progress token); does nothing otherwise. */
  progress(progress: number, total?: number, message?: string): Promise<void>;
  /** Sends a log message related to this call, when the client asked for that level. */
  log(level: LogLevel, data: unknown): Promise<void>;
  /**
   * Tells the audit log what the call acted on and how it ended: the resource URI, the error code
   * of a failure answered as an `isError` result, the bytes of content returned. Optional (absent
   * outside the MCP edge).
   */
  audit?(facts: ToolAuditFacts): void;
}

export interface ToolAuditFacts {
  uri?: string;
  code?: string;
  bytes?: number;
}

export interface ToolResult {
  content: ContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  /** Metadata for the client (not the model), e.g. the sources a listing went without. */
  _meta?: Record<string, unknown>;
}

export interface Tool<Input extends z.ZodType = z.ZodType> {
  /** 1–128 characters of A–Z, a–z, 0–9, `_`, `-` and `.`. */
  name: string;
  title?: string;
  /** What the tool does, for the model; required and non-empty. */
  description: string;
  /** The arguments, as a zod object schema. */
  input: Input;
  /** The shape of `structuredContent`, when the tool returns one. */
  output?: z.ZodType;
  annotations?: ToolAnnotations;
  /** Icons hosts may show; without them the tool gets Reservoir's generic tool icon. */
  icons?: Icon[];
  /**
   * A URI prefix (a source's root) every resource of which the tool can read whatever it is asked —
   * a query tool over a database. Under access rules it is offered only to a principal that may read
   * everything there: a rule denying one table there keeps the tool from that principal.
   */
  reads?: string;
  /** Sent as the tool's `_meta` in `tools/list` (e.g. an MCP App's `ui.resourceUri`). */
  meta?: Record<string, unknown>;
  /**
   * Whether a client with these capabilities is offered the tool at all. A tool it returns false for
   * is neither listed nor callable for that client (e.g. an MCP App tool, for hosts without the
   * extension). @default always
   */
  offeredTo?(capabilities: ClientCapabilities): boolean;
  /**
   * Runs the tool. Returns a result, or `inputRequired(...)` to ask the client for input first (the
   * call is then made again with the answers; see `core/input.ts`).
   */
  call(
    args: z.output<Input>,
    ctx: ToolContext,
  ): ToolResult | InputRequired | Promise<ToolResult | InputRequired>;
}

const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** Types a tool definition (inferring its argument type from `input`) and checks it. */
export function defineTool<Input extends z.ZodType>(tool: Tool<Input>): Tool {
  if (!TOOL_NAME.test(tool.name))
    throw new ConfigError(
      'tool',
      `invalid tool name '${tool.name}': use 1-128 of A-Z a-z 0-9 _ - .`,
    );
  if (tool.description.trim() === '')
    throw new ConfigError('tool', `tool '${tool.name}' needs a description`);
  return tool as unknown as Tool;
}

/** The tools declared to answer in one round (answeringInOneRound). */
const oneRound = new WeakSet<Tool>();

/**
 * Declares that `tool` answers every call in one round: it never returns `inputRequired(...)` and
 * never reads a previous round's answers or state. Only such a tool's plain 2025-era stdio
 * `tools/call` is answered without the SDK's dispatch (mcp/direct/tools.ts): a multi-round tool's
 * input requests are served on a 2025-era connection by the SDK's shim, which asks the client and
 * calls the tool again. The built-in tools declare it; an embedder's tools go through the SDK.
 */
export function answeringInOneRound<T extends Tool>(tool: T): T {
  oneRound.add(tool);
  return tool;
}

/** `defineTool` for a tool that answers in one round (answeringInOneRound): the built-in tools. */
export function defineOneRoundTool<Input extends z.ZodType>(tool: Tool<Input>): Tool {
  return answeringInOneRound(defineTool(tool));
}

/** Whether `tool` was declared to answer in one round (answeringInOneRound). */
export function answersInOneRound(tool: Tool): boolean {
  return oneRound.has(tool);
}

/** Validates arguments; the error names the first bad argument and what was expected. */
export function checkToolArguments(tool: Tool, args: unknown): unknown {
  // A null argument is one not given: strict hosts send null for every optional one (portable-schema.ts).
  const result = tool.input.safeParse(withoutNulls(args ?? {}));
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const path = issue.path.map(String);
  if (issue.code === 'unrecognized_keys' && issue.keys.length > 0) {
    // Name the unknown argument itself, and the ones the tool does take.
    const known = Object.keys(toolSchemas(tool).inputSchema['properties'] ?? {});
    const argument = [...path, issue.keys[0]!].join('.');
    const takes =
      path.length > 0 ? '' : ` (it takes ${known.length === 0 ? 'none' : known.join(', ')})`;
    throw new InvalidArgumentError(argument, `not an argument of ${tool.name}${takes}`, {
      tool: tool.name,
    });
  }
  const argument = path.length > 0 ? path.join('.') : 'arguments';
  throw new InvalidArgumentError(argument, issue.message, { tool: tool.name });
}

/** JSON Schemas for `tools/list`, in the forms strict hosts take (portable-schema.ts). */
export function toolSchemas(tool: Tool): {
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
} {
  const inputSchema = portableSchema(
    z.toJSONSchema(tool.input, { io: 'input' }) as Record<string, unknown>,
  );
  if (tool.output === undefined) return { inputSchema };
  return {
    inputSchema,
    outputSchema: portableOutputSchema(
      z.toJSONSchema(tool.output, { io: 'output' }) as Record<string, unknown>,
    ),
  };
}
