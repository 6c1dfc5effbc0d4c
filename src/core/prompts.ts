/**
 * Prompts: user-chosen message templates with arguments. A prompt's messages may embed resources
 * by URI; those are resolved through the Registry when the prompt is fetched, so the same size
 * caps, containment and (later) access rules apply as to a plain read.
 */
import { InvalidArgumentError, NotFoundError } from './errors.js';
import { isInputRequired, noInput, type InputContext, type InputRequired } from './input.js';
import { ownMember } from './defined.js';
import type { Registry } from './registry.js';
import type { CallContext, Completer, ContentBlock } from './types.js';

export interface PromptArgument {
  name: string;
  title?: string;
  description?: string;
  /** @default false */
  required?: boolean;
  /** Completes this argument's value (see `completion/complete`). */
  complete?: Completer;
}

/** Message content: any content block, or a resource to embed by URI when the prompt is fetched. */
export type PromptContent = ContentBlock | { type: 'resource_ref'; uri: string };

export interface PromptMessage {
  role: 'user' | 'assistant';
  content: PromptContent;
}

/**
 * What a prompt made with `definePrompt` gets besides its arguments: cancellation and (InputContext)
 * the client's capabilities and its answers to a previous `inputRequired()` round.
 */
export interface PromptContext extends CallContext, InputContext {}

export interface Prompt {
  name: string;
  title?: string;
  description?: string;
  arguments?: PromptArgument[];
  /**
   * Builds the messages for validated arguments (every required one present, all strings), or
   * returns `inputRequired(...)` to ask the client for input first (see `core/input.ts`).
   */
  messages(
    args: Record<string, string>,
    ctx: CallContext & Partial<InputContext>,
  ): PromptMessage[] | InputRequired | Promise<PromptMessage[] | InputRequired>;
}

/** A prompt whose `messages` reads client input through a complete PromptContext (see `definePrompt`). */
export interface PromptDefinition extends Omit<Prompt, 'messages'> {
  messages(
    args: Record<string, string>,
    ctx: PromptContext,
  ): PromptMessage[] | InputRequired | Promise<PromptMessage[] | InputRequired>;
}

/**
 * Types a prompt whose messages may need client input: `ctx` is a complete PromptContext (the
 * server always passes one; a direct call without one gets "no capabilities, no answers").
 *
 * @example
 * ```ts
 * reservoir.prompts.add(definePrompt({
 *   name: 'standup',
 *   description: 'A stand-up summary, for a team the user picks',
 *   messages(_args, ctx) {
 *     const team = ctx.accepted<{ team: string }>('team');
 *     if (team === undefined) {
 *       return inputRequired({ inputRequests: { team: inputRequired.elicit('Which team?', { type: 'object', properties: { team: { type: 'string' } }, required: ['team'] }) } });
 *     }
 *     return [{ role: 'user', content: { type: 'text', text: `Summarise the stand-up of ${team.team}.` } }];
 *   },
 * }));
 * ```
 */
export function definePrompt(prompt: PromptDefinition): Prompt {
  return { ...prompt, messages: (args, ctx) => prompt.messages(args, { ...noInput(), ...ctx }) };
}

export interface RenderedMessage {
  role: 'user' | 'assistant';
  content: ContentBlock;
}

/** Checks arguments against a prompt's declaration; names the first missing or unknown one. */
export function checkPromptArguments(prompt: Prompt, args: unknown): Record<string, string> {
  if (args !== undefined && (args === null || typeof args !== 'object' || Array.isArray(args))) {
    throw new InvalidArgumentError('arguments', 'must be an object of string values');
  }
  const given = (args ?? {}) as Record<string, unknown>;
  const declared = new Map((prompt.arguments ?? []).map((a) => [a.name, a]));
  for (const [name, value] of Object.entries(given)) {
    if (!declared.has(name))
      throw new InvalidArgumentError(name, `prompt '${prompt.name}' has no argument '${name}'`, {
        prompt: prompt.name,
      });
    if (typeof value !== 'string')
      throw new InvalidArgumentError(name, 'must be a string', { prompt: prompt.name });
  }
  for (const argument of declared.values()) {
    // Given means given: a required argument `constructor` the client left out is missing, not
    // what Object.prototype holds under that name.
    const value = ownMember(given, argument.name);
    if (argument.required === true && (value === undefined || value === '')) {
      throw new InvalidArgumentError(argument.name, `required by prompt '${prompt.name}'`, {
        prompt: prompt.name,
      });
    }
  }
  return given as Record<string, string>;
}

/**
 * Renders a prompt: validates arguments, builds its messages, embeds referenced resources. A prompt
 * that needs client input first answers `InputRequired`, passed through as is.
 */
export async function renderPrompt(
  prompt: Prompt,
  args: unknown,
  registry: Registry,
  ctx: CallContext & Partial<InputContext>,
): Promise<RenderedMessage[] | InputRequired> {
  const checked = checkPromptArguments(prompt, args);
  const messages = await prompt.messages(checked, ctx);
  if (isInputRequired(messages)) return messages;
  const rendered: RenderedMessage[] = [];
  for (const message of messages) {
    if (message.content.type !== 'resource_ref') {
      rendered.push({ role: message.role, content: message.content });
      continue;
    }
    const result = await registry.read(message.content.uri, ctx).catch((error: unknown) => {
      // Only the prompt's author (the local user) is told which embedded URI is missing; anyone
      // else learns that the prompt cannot be rendered for them, not the name of what it embeds.
      if (
        error instanceof NotFoundError &&
        ctx.principal !== undefined &&
        ctx.principal.kind !== 'local'
      ) {
        throw new InvalidArgumentError(
          'name',
          `prompt '${prompt.name}' embeds a resource that was not found (or that you may not read)`,
          { prompt: prompt.name },
        );
      }
      throw error;
    });
    for (const resource of result.contents)
      rendered.push({ role: message.role, content: { type: 'resource', resource } });
  }
  return rendered;
}
