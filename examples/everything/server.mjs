#!/usr/bin/env node
// The "everything" server: every fixture the official MCP conformance suites call by name, built
// only with Reservoir's public library API, serving both protocol eras (2025-11-25 sessions and
// 2026-07-28 stateless requests).
//
//   node examples/everything/server.mjs              # MCP over stdio
//   node examples/everything/server.mjs --port 0     # Streamable HTTP on 127.0.0.1; prints the URL first
//
// `npm run conformance` runs the suites against it; test/conformance drives it over stdio.
// Inside this repository `mcp-reservoir` resolves to the package itself (Node's self-reference).
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { createLogger, createReservoir, defineTool } from 'mcp-reservoir';
import { mrtrTools } from './mrtr.mjs';
import { prompts } from './prompts.mjs';
import { testResources } from './resources.mjs';
import { behaviourTools, contentTools } from './tools.mjs';

const { values: flags } = parseArgs({
  options: {
    port: { type: 'string' },
    host: { type: 'string', default: '127.0.0.1' },
    verbose: { type: 'boolean', default: false },
  },
});

const reservoir = createReservoir({
  // Logs go to stderr only: stdout is the protocol over stdio, and the URL line over HTTP.
  ...(flags.verbose ? { logger: createLogger('debug') } : {}),
  logging: true,
  providers: [testResources()],
  prompts,
  tools: [...contentTools, ...behaviourTools, ...mrtrTools],
  instructions: 'A conformance fixture server: every tool, resource and prompt is a test fixture.',
});

// Tools that change the tool and prompt lists, so list_changed notifications can be observed.
const toggle = (catalog, item) =>
  catalog.remove(item.name) ? 'removed' : (catalog.add(item), 'added');
const dynamicTool = defineTool({
  name: 'test_dynamic_tool',
  description: 'Comes and goes with test_trigger_tool_change',
  input: z.object({}),
  call: () => ({ content: [{ type: 'text', text: 'I am here.' }] }),
});
const dynamicPrompt = {
  name: 'test_dynamic_prompt',
  description: 'Comes and goes with test_trigger_prompt_change',
  messages: () => [
    { role: 'user', content: { type: 'text', text: 'A prompt that comes and goes.' } },
  ],
};
reservoir.tools.add(
  defineTool({
    name: 'test_trigger_tool_change',
    description: 'Adds or removes test_dynamic_tool (the tool list changes)',
    input: z.object({}),
    call: () => ({
      content: [
        { type: 'text', text: `test_dynamic_tool ${toggle(reservoir.tools, dynamicTool)}` },
      ],
    }),
  }),
);
reservoir.tools.add(
  defineTool({
    name: 'test_trigger_prompt_change',
    description: 'Adds or removes test_dynamic_prompt (the prompt list changes)',
    input: z.object({}),
    call: () => ({
      content: [
        { type: 'text', text: `test_dynamic_prompt ${toggle(reservoir.prompts, dynamicPrompt)}` },
      ],
    }),
  }),
);

const shutdown = () => void reservoir.close().then(() => process.exit(0));
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, shutdown);

if (flags.port !== undefined) {
  const { url } = await reservoir.listen({ host: flags.host, port: Number(flags.port) });
  process.stdout.write(`${url}\n`);
} else {
  await reservoir.serveStdio().closed;
  await reservoir.close();
}
