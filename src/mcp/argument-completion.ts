/**
 * `completion/complete` for prompt arguments and resource-template variables, with the arguments
 * already chosen as context.
 */
import type { Server } from '@modelcontextprotocol/server';
import type { Catalog } from '../core/named-items.js';
import { InvalidArgumentError } from '../core/errors.js';
import type { Prompt } from '../core/prompts.js';
import type { Registry } from '../core/registry.js';
import { boundCompletion } from '../core/templates.js';
import { guarded, type Guard } from './guarded-call.js';

export function installCompletionHandler(
  server: Server,
  prompts: Catalog<Prompt>,
  registry: Registry,
  guard: Guard,
): void {
  server.setRequestHandler('completion/complete', (request, handlerCtx) => {
    const { ref, argument } = request.params;
    return guarded(
      guard,
      handlerCtx,
      'completion/complete',
      ref.type === 'ref/resource' ? ref.uri : ref.name,
      async (call) => {
        const context = request.params.context?.arguments ?? {};
        const ctx = { signal: call.signal, principal: call.principal };
        if (ref.type === 'ref/resource') {
          return {
            completion: {
              ...(await registry.completeTemplate(
                ref.uri,
                argument.name,
                argument.value,
                context,
                ctx,
              )),
            },
          };
        }
        const prompt = prompts.get(ref.name);
        if (
          prompt === undefined ||
          !registry.access.mayUse(call.principal, 'prompts', prompt.name)
        ) {
          throw new InvalidArgumentError('ref', `no prompt named '${ref.name}'`);
        }
        const declared = prompt.arguments?.find((a) => a.name === argument.name);
        if (declared === undefined)
          throw new InvalidArgumentError(
            'argument',
            `prompt '${ref.name}' has no argument '${argument.name}'`,
          );
        if (declared.complete === undefined)
          return { completion: { values: [], total: 0, hasMore: false } };
        return {
          completion: { ...boundCompletion(await declared.complete(argument.value, context, ctx)) },
        };
      },
    );
  });
}
