/**
 * `prompts/list` and `prompts/get`: translation between the SDK and the prompt catalog. A prompt
 * may answer `inputRequired()` (multi-round-trip input; see input.ts).
 */
import type { Prompt as WirePrompt, Server } from '@modelcontextprotocol/server';
import type { Catalog } from '../core/named-items.js';
import { InvalidArgumentError } from '../core/errors.js';
import { renderPrompt, type Prompt } from '../core/prompts.js';
import type { Registry } from '../core/registry.js';
import { isInputRequired } from '../core/input.js';
import { guarded, type Guard } from './guarded-call.js';
import { PROMPT_ICONS } from './inline-icons.js';
import { inputContext, toWireInputRequired, type StateCodec } from './input.js';
import { definedProps } from '../core/defined.js';

export function installPromptHandlers(
  server: Server,
  prompts: Catalog<Prompt>,
  registry: Registry,
  guard: Guard,
  codec: StateCodec,
): void {
  server.setRequestHandler('prompts/list', (request, handlerCtx) =>
    guarded(guard, handlerCtx, 'prompts/list', undefined, async (call) => {
      const page = registry.pageByName('prompts', prompts.all(), request.params?.cursor, {
        principal: call.principal,
      });
      const described = page.items.map(describePrompt);
      return page.nextCursor === undefined
        ? { prompts: described }
        : { prompts: described, nextCursor: page.nextCursor };
    }),
  );

  server.setRequestHandler('prompts/get', (request, handlerCtx) =>
    guarded(guard, handlerCtx, 'prompts/get', request.params.name, async (call) => {
      const prompt = prompts.get(request.params.name);
      if (prompt === undefined || !registry.access.mayUse(call.principal, 'prompts', prompt.name)) {
        throw new InvalidArgumentError('name', `no prompt named '${request.params.name}'`);
      }
      const ctx = {
        ...inputContext(server, handlerCtx),
        signal: call.signal,
        principal: call.principal,
      };
      const messages = await renderPrompt(prompt, request.params.arguments, registry, ctx);
      if (isInputRequired(messages)) return await toWireInputRequired(messages, codec, handlerCtx);
      return prompt.description === undefined
        ? { messages }
        : { description: prompt.description, messages };
    }),
  );
}

function describePrompt(prompt: Prompt): WirePrompt {
  return {
    name: prompt.name,
    ...definedProps({ title: prompt.title, description: prompt.description }),
    icons: PROMPT_ICONS,
    ...definedProps({
      arguments: prompt.arguments?.map((a) => ({
        name: a.name,
        ...definedProps({ title: a.title, description: a.description, required: a.required }),
      })),
    }),
  };
}
