/**
 * The config file's `access` section, in zod: access rules over URIs and operations, each naming
 * its principals (with their kind) or scopes. Part of the config schema (schema.ts).
 */
import { z } from 'zod';
import { OPERATIONS, PRINCIPAL_PATTERN, principalProblem } from '../core/access.js';
import { strict } from '../providers/utils/options.js';

const AccessRuleSchema = strict(
  {
    principals: z
      .array(
        z
          .string()
          .min(1)
          .superRefine((entry, ctx) => {
            const problem = principalProblem(entry);
            if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
          })
          .meta({ pattern: PRINCIPAL_PATTERN }),
      )
      .optional()
      .meta({
        description:
          'Principals the rule applies to, each with its kind: token:NAME (a static token), oauth:SUBJECT (an OAuth sub), token:* or oauth:* (any of that kind), anonymous, or * (anyone). A bare id is refused.',
      }),
    scopes: z
      .array(z.string().min(1))
      .optional()
      .meta({ description: 'The rule applies to principals holding any of these scopes.' }),
    operations: z
      .array(z.enum(OPERATIONS))
      .optional()
      .meta({ description: 'Operations covered. Default: all.' }),
    allow: z.array(z.string().min(1)).optional().meta({
      description:
        'URI glob patterns granted, e.g. file:///srv/docs/** or file:///srv/**/my docs/** (names as read; percent-escapes optional; prompts and tools: prompt:NAME, tool:NAME). Globs: * ** ? [...] {a,b}; %2A or \\* for a literal *.',
    }),
    deny: z
      .array(z.string().min(1))
      .optional()
      .meta({ description: 'URI glob patterns refused; a deny wins over any allow.' }),
  },
  'One access rule.',
);

export const AccessSchema = strict(
  {
    default: z
      .enum(['allow', 'deny'])
      .optional()
      .meta({ description: 'What applies when no rule matches. Default: deny.' }),
    rules: z
      .array(AccessRuleSchema)
      .meta({ description: 'Rules, each applying to principals by id or scope.' }),
  },
  'Who may see what: rules over URIs and operations, applied on every route to a resource. The local (stdio) user is exempt.',
);
