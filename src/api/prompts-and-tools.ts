/**
 * What a server offers besides resources: Agent Skills, prompts, tools (and the built-in ones), and
 * client input during a request. Re-exported by src/index.ts.
 */

/**
 * Agent Skills catalogs (the `io.modelcontextprotocol/skills` extension): build them from files or
 * git sources and pass them to `createReservoir`.
 *
 * @example
 * ```ts
 * const skills = await buildSkills([{ source: { type: 'files', root: './skills' }, origin: 'skills' }], { live: true });
 * const reservoir = createReservoir({ skills });
 * ```
 */
export { buildSkills } from '../server/skills.js';
export type { SkillsServing } from '../mcp/skills.js';
export type { SkillsSettings } from '../config/skills.js';

/**
 * Prompts: message templates a user picks; resources they embed (`{ type: 'resource_ref', uri }`)
 * are read through the registry when the prompt is fetched.
 *
 * @example
 * ```ts
 * reservoir.prompts.add({
 *   name: 'summarise',
 *   description: 'Summarise one document',
 *   arguments: [{ name: 'uri', required: true }],
 *   messages: ({ uri }) => [
 *     { role: 'user', content: { type: 'text', text: 'Summarise this document.' } },
 *     { role: 'user', content: { type: 'resource_ref', uri } },
 *   ],
 * });
 * ```
 */
export type { Prompt, PromptArgument, PromptMessage, PromptContent } from '../core/prompts.js';

/**
 * Prompts whose messages may need client input first: `ctx` is a complete PromptContext.
 *
 * @example
 * ```ts
 * reservoir.prompts.add(definePrompt({
 *   name: 'standup',
 *   description: 'A stand-up summary, for a team the user picks',
 *   messages(_args, ctx) {
 *     const team = ctx.accepted<{ team: string }>('team');
 *     if (team === undefined) return inputRequired({ inputRequests: { team: inputRequired.elicit('Which team?', z.object({ team: z.string() })) } });
 *     return [{ role: 'user', content: { type: 'text', text: `Summarise the stand-up of ${team.team}.` } }];
 *   },
 * }));
 * ```
 */
export { definePrompt } from '../core/prompts.js';
export type { PromptContext, PromptDefinition } from '../core/prompts.js';

/**
 * Client input during a request (multi-round-trip requests, 2026-07-28): a tool or prompt returns
 * `inputRequired(...)` to ask for an elicitation, a sampling or the client's roots, and reads the
 * answers on the retry. 2025-era clients get real server-to-client requests instead, so one handler
 * serves both eras. State between rounds is sealed by the server (see `ReservoirOptions.requestState`).
 *
 * @example
 * ```ts
 * defineTool({
 *   name: 'greet',
 *   description: 'Greets the user by the name they give',
 *   input: z.object({}),
 *   call(_args, ctx) {
 *     const answer = ctx.accepted('name', z.object({ name: z.string() }));
 *     if (answer === undefined) {
 *       return inputRequired({ inputRequests: { name: inputRequired.elicit('What is your name?', z.object({ name: z.string() })) }, state: { step: 1 } });
 *     }
 *     return { content: [{ type: 'text', text: `Hello, ${answer.name}!` }] };
 *   },
 * });
 * ```
 */
export { inputRequired, isInputRequired } from '../core/input.js';
export type {
  InputContext,
  InputRequest,
  InputRequired,
  InputResponse,
  ClientCapabilities,
  ElicitationSchema,
  SamplingMessage,
} from '../core/input.js';
export type { RequestStateOptions } from '../mcp/input.js';

/**
 * Tools: model-invoked functions with zod-described arguments.
 *
 * @example
 * ```ts
 * reservoir.tools.add(defineTool({
 *   name: 'word_count',
 *   description: 'Counts the words of a text resource',
 *   input: z.object({ uri: z.string() }),
 *   async call({ uri }) {
 *     const { contents } = await reservoir.registry.read(uri, { signal: AbortSignal.timeout(5000) });
 *     const text = contents.map((c) => ('text' in c ? c.text : '')).join(' ');
 *     return { content: [{ type: 'text', text: String(text.split(/\s+/).filter(Boolean).length) }] };
 *   },
 * }));
 * ```
 */
export { defineTool } from '../core/tools.js';
export { BlobCaps, BlobTooLargeError, type BlobCapRule } from '../core/blob-caps.js';
export type {
  Tool,
  ToolContext,
  ToolResult,
  ToolAnnotations,
  LogLevel as ToolLogLevel,
} from '../core/tools.js';

/**
 * The built-in tools for tool-only hosts: `list_resources`, `read_resource` and `find_resources`
 * over a registry (`reservoir serve` offers them unless `--no-tools`).
 *
 * @example
 * ```ts
 * for (const tool of builtinTools(reservoir.registry)) reservoir.tools.add(tool);
 * ```
 */
export { builtinTools, whoAmITool } from '../tools/index.js';
export type { BuiltinToolsOptions, FindOptions } from '../tools/index.js';

/**
 * The client did not declare a capability a tool or prompt needs: sent as -32021
 * (MissingRequiredClientCapability; HTTP 400) with `data.requiredCapabilities`.
 *
 * @example
 * ```ts
 * ctx.requireCapabilities({ sampling: {} }); // throws MissingClientCapabilityError when undeclared
 * throw new MissingClientCapabilityError({ elicitation: {} });
 * ```
 */
export { MissingClientCapabilityError } from '../core/input.js';
