/**
 * `completion/complete` for prompt arguments and resource-template variables, with the arguments
 * already chosen as context.
 */
import type { Server } from '@modelcontextprotocol/server';
import type { Catalog } from '../core/catalog.js';
import { InvalidArgumentError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import type { Prompt } from '../core/prompts.js';
import { boundCompletion, type Registry } from '../core/registry.js';
import { toProtocolError } from './errors.js';

export function installCompletionHandler(server: Server, prompts: Catalog<Prompt>, registry: Registry, logger: Logger): void {
  server.setRequestHandler('completion/complete', async (request, handlerCtx) => {
    try {
      const { ref, argument } = request.params;
      const context = request.params.context?.arguments ?? {};
      const ctx = { signal: handlerCtx.mcpReq.signal };
      if (ref.type === 'ref/resource') {
        return { completion: { ...(await registry.completeTemplate(ref.uri, argument.name, argument.value, context, ctx)) } };
      }
      const prompt = prompts.get(ref.name);
      if (prompt === undefined) throw new InvalidArgumentError('ref', `no prompt named '${ref.name}'`);
      const declared = prompt.arguments?.find((a) => a.name === argument.name);
      if (declared === undefined) throw new InvalidArgumentError('argument', `prompt '${ref.name}' has no argument '${argument.name}'`);
      if (declared.complete === undefined) return { completion: { values: [], total: 0, hasMore: false } };
      return { completion: { ...boundCompletion(await declared.complete(argument.value, context, ctx)) } };
    } catch (error) {
      throw toProtocolError(error, logger);
    }
  });
}
