/**
 * The config file's `prompts` section, in zod: prompt templates with their arguments (and how
 * clients complete them) and messages of text or an embedded resource. Part of the config schema
 * (schema.ts); compiled into core prompts by prompts.ts.
 */
import { z } from 'zod';
import { passableName, strict } from '../providers/utils/options.js';

const CompleteSchema = z
  .union([
    z.literal('path').meta({
      description: "Complete paths of served files, relative to the config file's directory.",
    }),
    z.array(z.string()).meta({ description: 'A fixed list of values, offered by prefix.' }),
  ])
  .meta({ description: 'How clients complete this argument: `path`, or a list of values.' });

export const ArgumentSchema = strict(
  {
    name: passableName(z.string().min(1), 'the name of a prompt argument').meta({
      description: 'The argument name, used as {{name}} in messages.',
    }),
    title: z.string().optional(),
    description: z.string().optional(),
    required: z
      .boolean()
      .optional()
      .meta({ description: 'Whether prompts/get must supply it. Default: false.' }),
    complete: CompleteSchema.optional(),
  },
  'A prompt argument.',
);

export const MessageSchema = strict(
  {
    role: z.enum(['user', 'assistant']).meta({ description: 'Who speaks this message.' }),
    text: z.string().optional().meta({
      description:
        'Text, with {{argument}} replaced by argument values. Exactly one of text or resource.',
    }),
    resource: z.string().min(1).optional().meta({
      description:
        'A resource to embed: a URI, or a path relative to the config file; {{argument}} is replaced. Exactly one of text or resource.',
    }),
  },
  'A prompt message: text, or an embedded resource.',
);

export const PromptSchema = strict(
  {
    name: z.string().min(1).meta({ description: 'The prompt name clients ask for.' }),
    title: z.string().optional(),
    description: z.string().optional(),
    arguments: z.array(ArgumentSchema).optional(),
    messages: z
      .array(MessageSchema)
      .min(1, { error: 'expected at least one message, got an empty list' }),
  },
  'A prompt template.',
);
