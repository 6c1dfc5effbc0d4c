/**
 * Calling the built-in tools directly, as `tools/call` does: arguments checked by the tool's own
 * schema first, a thrown ReservoirError turned into an `isError` result. The context is a fake
 * that records progress and log calls.
 */
import {
  checkToolArguments,
  type Tool,
  type ToolContext,
  type ToolResult,
} from '../../src/core/tools.js';
import { isReservoirError } from '../../src/core/errors.js';
import { noInput } from '../../src/core/input.js';

export interface FakeContext extends ToolContext {
  readonly progressCalls: unknown[][];
  readonly logCalls: unknown[][];
}

export function fakeContext(signal: AbortSignal = new AbortController().signal): FakeContext {
  const progressCalls: unknown[][] = [];
  const logCalls: unknown[][] = [];
  return {
    ...noInput(),
    signal,
    progressCalls,
    logCalls,
    progress: async (...args) => void progressCalls.push(args),
    log: async (...args) => void logCalls.push(args),
  };
}

/** Validates `args` (throwing InvalidArgumentError like the protocol edge) and calls the tool. */
export async function call(
  tool: Tool,
  args: Record<string, unknown> = {},
  ctx: ToolContext = fakeContext(),
): Promise<ToolResult> {
  const checked = checkToolArguments(tool, args);
  try {
    return (await tool.call(checked as never, ctx)) as ToolResult;
  } catch (error) {
    if (!isReservoirError(error)) throw error;
    return { content: [{ type: 'text', text: error.message }], isError: true };
  }
}

/** The text of a result's text blocks. */
export function textOf(result: { content: readonly unknown[] }): string {
  return (result.content as { type: string; text?: string }[])
    .filter((block) => block.type === 'text')
    .map((block) => block.text ?? '')
    .join('\n');
}

export interface Summary {
  uri: string;
  name: string;
  title?: string;
  mimeType?: string;
  size?: number;
  lastModified?: string;
}

export interface Listed {
  resources: Summary[];
  nextCursor?: string;
  examined?: number;
}

export function structured(result: { structuredContent?: unknown }): Listed {
  if (result.structuredContent === undefined) throw new Error('expected structuredContent');
  return result.structuredContent as Listed;
}
