/**
 * `prompts/list` and `prompts/get`: translation between the SDK and the prompt catalog. A prompt
 * may answer `inputRequired()` (multi-round-trip input; see input.ts).
 */
import type { Prompt as WirePrompt, Server } from '@modelcontextprotocol/server';
import type { Catalog } from '../core/catalog.js';
import { InvalidArgumentError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { renderPrompt, type Prompt } from '../core/prompts.js';
import type { Registry } from '../core/registry.js';
import { isInputRequired } from '../core/input.js';
import { toProtocolError } from './errors.js';
import { inputContext, toWireInputRequired, type StateCodec } from './input.js';

export function installPromptHandlers(server: Server, prompts: Catalog<Prompt>, registry: Registry, logger: Logger, codec: StateCodec): void {
  server.setRequestHandler('prompts/list', async (request) => {
    try {
      const page = registry.pageByName('prompts', prompts.all(), request.params?.cursor);
      const described = page.items.map(describePrompt);
      return page.nextCursor === undefined ? { prompts: described } : { prompts: described, nextCursor: page.nextCursor };
    } catch (error) {
      throw toProtocolError(error, logger);
    }
  });

  server.setRequestHandler('prompts/get', async (request, handlerCtx) => {
    try {
      const prompt = prompts.get(request.params.name);
      if (prompt === undefined) throw new InvalidArgumentError('name', `no prompt named '${request.params.name}'`);
      const ctx = { ...inputContext(server, handlerCtx), signal: handlerCtx.mcpReq.signal };
      const messages = await renderPrompt(prompt, request.params.arguments, registry, ctx);
      if (isInputRequired(messages)) return await toWireInputRequired(messages, codec, handlerCtx);
      return prompt.description === undefined ? { messages } : { description: prompt.description, messages };
    } catch (error) {
      throw toProtocolError(error, logger);
    }
  });
}

function describePrompt(prompt: Prompt): WirePrompt {
  return {
    name: prompt.name,
    ...(prompt.title === undefined ? {} : { title: prompt.title }),
    ...(prompt.description === undefined ? {} : { description: prompt.description }),
    ...(prompt.arguments === undefined
      ? {}
      : {
          arguments: prompt.arguments.map((a) => ({
            name: a.name,
            ...(a.title === undefined ? {} : { title: a.title }),
            ...(a.description === undefined ? {} : { description: a.description }),
            ...(a.required === undefined ? {} : { required: a.required }),
          })),
        }),
  };
}
