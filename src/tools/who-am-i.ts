/**
 * `who_am_i`: the principal a request runs as (id, kind, scopes) and the access rules in force for
 * it, as the server itself applies them. The explorer's "who am I" panel shows this; an operator
 * checking a token's reach uses it the same way. It reveals only what concerns the caller: the
 * rules that apply to this principal, each naming only the caller (not the other principals or
 * scopes a shared rule names — see AccessPolicy.rulesFor), never other principals' rules or any token.
 */
import { z } from 'zod';
import { LOCAL_PRINCIPAL } from '../core/principal.js';
import type { Registry } from '../core/registry.js';
import { defineOneRoundTool, type Tool } from '../core/tools.js';
import { READ_ONLY, toolResult } from './shared.js';
import { definedProps } from '../core/defined.js';

export const WHO_AM_I = 'who_am_i';

const rule = z.object({
  principals: z.array(z.string()).optional(),
  scopes: z.array(z.string()).optional(),
  operations: z.array(z.string()).optional(),
  allow: z.array(z.string()).optional(),
  deny: z.array(z.string()).optional(),
});

const output = z.object({
  principal: z.object({
    id: z.string(),
    kind: z.enum(['local', 'anonymous', 'token', 'oauth']),
    scopes: z.array(z.string()),
  }),
  access: z
    .object({ default: z.enum(['allow', 'deny']), rules: z.array(rule) })
    .optional()
    .describe(
      'The rules that apply to this principal; absent when no rules are in force (everything served is visible).',
    ),
});

export function whoAmITool(registry: Registry): Tool {
  return defineOneRoundTool({
    name: WHO_AM_I,
    title: 'Who am I',
    description:
      'Who this server takes the caller to be (principal id, kind, scopes) and the access rules in force for that principal.',
    input: z.strictObject({}),
    output,
    annotations: { title: 'Who am I', ...READ_ONLY },
    call(_args, ctx) {
      const principal = ctx.principal ?? LOCAL_PRINCIPAL;
      const access = registry.access.rulesFor(principal);
      const lines = [
        `You are ${principal.id} (${principal.kind})${principal.scopes.length > 0 ? ` with scopes ${principal.scopes.join(', ')}` : ''}.`,
      ];
      if (access === undefined)
        lines.push('No access rules are in force: everything served is visible.');
      else
        lines.push(
          `${access.rules.length} access rule${access.rules.length === 1 ? '' : 's'} apply; where none matches: ${access.default}.`,
        );
      const structured = {
        principal: { id: principal.id, kind: principal.kind, scopes: [...principal.scopes] },
        ...definedProps({ access }),
      };
      return toolResult(lines.join('\n'), structured);
    },
  });
}
