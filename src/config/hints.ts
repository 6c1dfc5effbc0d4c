/**
 * The config's `hints` section (and `server`'s presentation fields, hints to hosts too): audience and priority of listed resources (core/hints.ts), set by
 * URI globs over the name-derived defaults. Every pattern is checked here, so a glob that cannot
 * mean what it seems (an unclosed `[` or `{`) is refused with the file's line, not served.
 */
import { z } from 'zod';
import {
  AUDIENCES,
  RESOURCE_ICON_MODES,
  type Audience,
  type ResourceIconMode,
} from '../core/hints.js';
import { compileRulePattern } from '../core/rule-pattern.js';
import { strict } from '../providers/utils/options.js';

const GlobSchema = z
  .string()
  .min(1, { error: 'expected a URI glob pattern, got an empty string' })
  .superRefine((pattern, ctx) => {
    const problem = compileRulePattern(pattern).problems[0];
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  });

const HintRuleSchema = strict(
  {
    match: z
      .union([GlobSchema, z.array(GlobSchema).min(1, { error: 'expected at least one pattern' })])
      .meta({
        description:
          "URI glob patterns (the access rules' syntax): e.g. **/CHANGELOG.md, file:///srv/docs/**, git://app/*/generated/**.",
      }),
    priority: z
      .number()
      .min(0, { error: 'expected a priority from 0 to 1' })
      .max(1, { error: 'expected a priority from 0 to 1' })
      .optional()
      .meta({ description: 'How important: 0 (entirely optional) to 1 (most important).' }),
    audience: z
      .array(z.enum(AUDIENCES as [Audience, ...Audience[]]))
      .min(1, { error: 'expected user, assistant or both' })
      .optional()
      .meta({ description: 'Who the resources are for: user, assistant or both.' }),
  },
  'One rule: the resources whose URI matches get its priority and audience.',
).refine((rule) => rule.priority !== undefined || rule.audience !== undefined, {
  error: 'a rule sets priority, audience or both',
});

export const HintsSchema = strict(
  {
    defaults: z.boolean().optional().meta({
      description:
        'Derive hints from names: READMEs, index pages, SKILL.md and AGENTS.md high; vendored, generated, lock and minified files low. Default: true.',
    }),
    rules: z.array(HintRuleSchema).optional().meta({
      description:
        'Rules applied in order over the defaults; each sets the fields it names, so a later rule overrides an earlier one.',
    }),
    resourceIcons: z
      .enum(RESOURCE_ICON_MODES as [ResourceIconMode, ...ResourceIconMode[]])
      .optional()
      .meta({
        description:
          "Which listed resources carry the icon of their kind. auto: by URL over HTTP (~60 bytes an item), none over stdio, where the picture would go inline (~350 bytes an item, a listing's bytes tripled); the server, tools, prompts and templates carry icons on both. always: also inline over stdio. off: none. Default: auto.",
      }),
  },
  'Hints on listed resources (annotations.priority and annotations.audience, icons) for hosts that pick context. Applied on reload.',
);

/** `server.title`, `server.description`, `server.websiteUrl`: how hosts present the server. */
export const presentationOptions = {
  title: z.string().min(1).max(200).optional().meta({
    description: "The server's display name in hosts (serverInfo.title). Default: Reservoir.",
  }),
  description: z.string().min(1).max(2000).optional().meta({
    description:
      'What this server offers, shown by hosts (serverInfo.description). Default: the package description.',
  }),
  websiteUrl: z
    .url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' })
    .optional()
    .meta({
      description: "Where to learn more (serverInfo.websiteUrl). Default: the project's home page.",
    }),
};

export type HintsConfig = z.output<typeof HintsSchema>;
