// What the MODEL is given when an agent framework calls read_resource on `reservoir serve` (the
// built CLI, over stdio) for a text file, through each framework's own MCP adapter with its
// default settings: LangChain's `@langchain/mcp-adapters` (the ToolMessage content), Mastra's
// `@mastra/mcp` (the tool's `toModelOutput`), the AI SDK's `@ai-sdk/mcp` (the tool's
// `toModelOutput`) and OpenAI Agents' `@openai/agents-core` (`MCPServerStdio` run by its own
// Runner against its ScriptedModel: the `function_call_result` item of the next model request).
// Each must contain the file's text. No model is called: the value asserted is the one each
// framework would send to it.
import { createMCPClient } from '@ai-sdk/mcp';
import { Experimental_StdioMCPTransport } from '@ai-sdk/mcp/mcp-stdio';
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import { MCPClient } from '@mastra/mcp';
import { Agent, MCPServerStdio, Runner } from '@openai/agents-core';
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents-core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_PATH, ensureBuilt } from '../helpers/build.js';
import { Cleanup } from '../helpers/clients.js';
import { fileUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';

const TEXT = '# Retry budget\n\nEvery client retries at most 3 times, with jitter.\n';

const cleanup = new Cleanup();
let root: string;
let args: string[];
let uri: string;

beforeAll(async () => {
  await ensureBuilt();
  root = makeTempDir();
  cleanup.add(() => removeTree(root));
  writeTree(root, { 'docs/retry.md': TEXT });
  args = [CLI_PATH, 'serve', root, '--log-level', 'warn'];
  uri = fileUri(root, 'docs/retry.md');
});

afterAll(() => cleanup.run());

describe('read_resource of a text file, as each framework gives it to the model', () => {
  it("LangChain (@langchain/mcp-adapters, default settings): the ToolMessage's content", async () => {
    const client = new MultiServerMCPClient({
      mcpServers: { reservoir: { transport: 'stdio', command: process.execPath, args } },
    });
    cleanup.add(() => client.close());
    const tool = (await client.getTools()).find((t) => t.name === 'read_resource');
    expect(tool).toBeDefined();
    const message = (await tool!.invoke({
      type: 'tool_call',
      id: 'call-1',
      name: 'read_resource',
      args: { uri },
    })) as { content: unknown };
    const content = message.content as { type: string; text?: string }[];
    expect(content[0]).toEqual({ type: 'text', text: TEXT });
  });

  it("Mastra (@mastra/mcp): the tool's toModelOutput of its result", async () => {
    const client = new MCPClient({ servers: { reservoir: { command: process.execPath, args } } });
    cleanup.add(() => client.disconnect());
    const tool = (await client.listTools())['reservoir_read_resource'] as unknown as {
      execute(input: unknown, context: unknown): Promise<unknown>;
      toModelOutput?(output: unknown): unknown;
    };
    expect(tool?.toModelOutput).toBeTypeOf('function');
    const output = await tool.execute({ uri }, {});
    // Mastra trims the joined text blocks.
    expect(await tool.toModelOutput!(output)).toEqual({ type: 'text', value: TEXT.trim() });
  });

  it("the AI SDK (@ai-sdk/mcp): the tool's toModelOutput of its result", async () => {
    const client = await createMCPClient({
      transport: new Experimental_StdioMCPTransport({ command: process.execPath, args }),
    });
    cleanup.add(() => client.close());
    const tool = (await client.tools())['read_resource'] as unknown as {
      execute(input: unknown, options: unknown): Promise<unknown>;
      toModelOutput(options: unknown): unknown;
    };
    const output = await tool.execute({ uri }, { toolCallId: 'call-1', messages: [] });
    const model = (await tool.toModelOutput({ toolCallId: 'call-1', input: { uri }, output })) as {
      type: string;
      value: { type: string; text?: string }[];
    };
    expect(model.type).toBe('content');
    expect(model.value[0]).toEqual({ type: 'text', text: TEXT });
  });

  it('OpenAI Agents (@openai/agents-core, MCPServerStdio): the function_call_result the next model request carries', async () => {
    const server = new MCPServerStdio({ command: process.execPath, args, name: 'reservoir' });
    await server.connect();
    cleanup.add(() => server.close());
    // The scripted model asks for read_resource, then answers; the runner executes the MCP tool
    // between the two and hands its output to the second request, as it would to a real model.
    const model = new ScriptedModel([
      [functionCall('read_resource', { uri }, { callId: 'call-1' })],
      [assistantMessage('done')],
    ]);
    const agent = new Agent({
      name: 'reader',
      instructions: 'Read files.',
      model,
      mcpServers: [server],
    });
    const result = await new Runner({ tracingDisabled: true }).run(
      agent,
      'What is the retry budget?',
    );
    expect(result.finalOutput).toBe('done');
    const input = model.calls[1]!.request.input;
    const items = (typeof input === 'string' ? [] : input) as {
      type: string;
      callId?: string;
      output?: unknown;
    }[];
    const given = items.find(
      (item) => item.type === 'function_call_result' && item.callId === 'call-1',
    );
    // The SDK hands a lone text block over as it is; beside the resource_link it serialises the
    // blocks as JSON into one text output, so the model reads the file's text JSON-escaped.
    const output = given?.output as { type: string; text: string };
    expect(output.type).toBe('text');
    const blocks = JSON.parse(output.text) as { type: string; text?: string; uri?: string }[];
    expect(blocks[0]).toEqual({ type: 'text', text: TEXT });
    expect(blocks[1]).toMatchObject({ type: 'resource_link', uri });
  });
});
