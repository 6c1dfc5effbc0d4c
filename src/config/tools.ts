/**
 * The `tools` section of the config file: which tools Reservoir makes besides the built-in ones.
 * Kept apart from schema.ts, which holds the sections every config has.
 */
import { z } from 'zod';
import { strict, wholeNumber } from '../providers/utils/options.js';

export const ToolsSchema = strict(
  {
    fromTemplates: z.boolean().optional().meta({
      description:
        'Offer one typed tool per resource template, for hosts that only call tools: git://app/{ref}/{+path} becomes read_app_file(ref, path), reading exactly as read_resource does (same access rules and limits). Default: false.',
    }),
    maxEnum: wholeNumber(0, 100).optional().meta({
      description:
        "A template variable whose completion values are complete and at most this many gets them as the argument's enum (only while no access rules are in force); otherwise a few are named in its description. Default: 20.",
    }),
  },
  'Tools made from the configuration (see docs/config.md, "Tools from templates").',
);

export type ToolsConfig = z.output<typeof ToolsSchema>;
