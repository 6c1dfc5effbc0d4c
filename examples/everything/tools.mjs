// The conformance suites' tools: content of every kind, logging, progress, errors, and the tools
// that need the client (sampling, elicitation). Those return `inputRequired(...)`: a 2026-07-28
// client answers and retries; on a 2025-era connection the server sends the matching request
// itself and calls the tool again — one handler, both eras.
import { z } from 'zod';
import { defineTool, inputRequired } from 'mcp-reservoir';
import { PNG_1X1, WAV_SILENCE } from './media.mjs';

const none = z.object({});
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const text = (value) => ({ content: [{ type: 'text', text: value }] });

/** How an elicitation ended, as text (accepted content, or the action). */
function elicited(answer) {
  return `action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`;
}

/** A tool that asks one form question under `key` and reports the answer. */
function elicitingTool({ name, description, input = none, message, schema, done }) {
  return defineTool({
    name,
    description,
    input,
    call(args, ctx) {
      const answer = ctx.inputResponse('form');
      if (answer.kind !== 'elicit') {
        return inputRequired({
          inputRequests: { form: inputRequired.elicit(message(args), schema) },
        });
      }
      return text(done(answer));
    },
  });
}

export const contentTools = [
  defineTool({
    name: 'test_simple_text',
    description: 'Returns a simple text response',
    input: none,
    call: () => text('This is a simple text response for testing.'),
  }),
  defineTool({
    name: 'test_image_content',
    description: 'Returns an image (a 1x1 PNG)',
    input: none,
    call: () => ({ content: [{ type: 'image', data: PNG_1X1, mimeType: 'image/png' }] }),
  }),
  defineTool({
    name: 'test_audio_content',
    description: 'Returns audio (a silent WAV)',
    input: none,
    call: () => ({ content: [{ type: 'audio', data: WAV_SILENCE, mimeType: 'audio/wav' }] }),
  }),
  defineTool({
    name: 'test_embedded_resource',
    description: 'Returns an embedded resource',
    input: none,
    call: () => ({
      content: [
        {
          type: 'resource',
          resource: {
            uri: 'test://embedded-resource',
            mimeType: 'text/plain',
            text: 'This is an embedded resource content.',
          },
        },
      ],
    }),
  }),
  defineTool({
    name: 'test_multiple_content_types',
    description: 'Returns text, an image and an embedded resource together',
    input: none,
    call: () => ({
      content: [
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: PNG_1X1, mimeType: 'image/png' },
        {
          type: 'resource',
          resource: {
            uri: 'test://mixed-content-resource',
            mimeType: 'application/json',
            text: JSON.stringify({ test: 'data', value: 123 }),
          },
        },
      ],
    }),
  }),
  defineTool({
    name: 'test_error_handling',
    description: 'Always fails: returns an isError result',
    input: none,
    call: () => ({
      ...text('This tool intentionally returns an error for testing'),
      isError: true,
    }),
  }),
];

export const behaviourTools = [
  defineTool({
    name: 'test_tool_with_logging',
    description: 'Sends three log messages while it runs',
    input: none,
    async call(_args, ctx) {
      await ctx.log('info', 'Tool execution started');
      await sleep(50);
      await ctx.log('info', 'Tool processing data');
      await sleep(50);
      await ctx.log('info', 'Tool execution completed');
      return text('Tool with logging executed successfully');
    },
  }),
  defineTool({
    name: 'test_logging_tool',
    description: 'Logs one message, only when the client asked for a log level',
    input: none,
    async call(_args, ctx) {
      await ctx.log('info', 'Diagnostic trace logging activated');
      return text('Logging evaluated');
    },
  }),
  defineTool({
    name: 'test_tool_with_progress',
    description: 'Reports progress 0, 50 and 100 of 100',
    input: none,
    async call(_args, ctx) {
      await ctx.progress(0, 100, 'Starting');
      await sleep(50);
      await ctx.progress(50, 100, 'Halfway');
      await sleep(50);
      await ctx.progress(100, 100, 'Done');
      return text('Tool with progress executed successfully');
    },
  }),
  defineTool({
    name: 'test_reconnection',
    description: 'Takes a moment to answer (stream reconnection tests)',
    input: none,
    async call() {
      await sleep(100);
      return text('Reconnection test completed successfully');
    },
  }),
  defineTool({
    name: 'test_sampling',
    description: 'Asks the client for an LLM completion of a prompt',
    input: z.object({ prompt: z.string().describe('The prompt to send to the LLM') }),
    call({ prompt }, ctx) {
      const answer = ctx.inputResponse('completion');
      if (answer.kind !== 'sampling') {
        return inputRequired({
          inputRequests: {
            completion: inputRequired.createMessage({
              messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
              maxTokens: 100,
            }),
          },
        });
      }
      const content = answer.result.content;
      return text(
        `LLM response: ${content?.type === 'text' ? content.text : JSON.stringify(content)}`,
      );
    },
  }),
  elicitingTool({
    name: 'test_elicitation',
    description: 'Asks the user for a username and an email address',
    input: z.object({ message: z.string().describe('The message to show the user') }),
    message: ({ message }) => message,
    schema: {
      type: 'object',
      properties: {
        username: { type: 'string', description: "User's response" },
        email: { type: 'string', description: "User's email address" },
      },
      required: ['username', 'email'],
    },
    done: (answer) => `User response: ${elicited(answer)}`,
  }),
  elicitingTool({
    name: 'test_elicitation_sep1034_defaults',
    description: 'Elicitation whose fields all have defaults (SEP-1034)',
    message: () => 'Please review and update the form fields with defaults',
    schema: {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'User name', default: 'John Doe' },
        age: { type: 'integer', description: 'User age', default: 30 },
        score: { type: 'number', description: 'User score', default: 95.5 },
        status: {
          type: 'string',
          description: 'User status',
          enum: ['active', 'inactive', 'pending'],
          default: 'active',
        },
        verified: { type: 'boolean', description: 'Verification status', default: true },
      },
      required: [],
    },
    done: (answer) => `Elicitation completed: ${elicited(answer)}`,
  }),
  elicitingTool({
    name: 'test_elicitation_sep1330_enums',
    description: 'Elicitation with every kind of enum field (SEP-1330)',
    message: () => 'Please select options from the enum fields',
    schema: {
      type: 'object',
      properties: {
        untitledSingle: {
          type: 'string',
          description: 'Select one option',
          enum: ['option1', 'option2', 'option3'],
        },
        titledSingle: {
          type: 'string',
          description: 'Select one option with titles',
          oneOf: [
            { const: 'value1', title: 'First Option' },
            { const: 'value2', title: 'Second Option' },
            { const: 'value3', title: 'Third Option' },
          ],
        },
        legacyEnum: {
          type: 'string',
          description: 'Select one option (legacy)',
          enum: ['opt1', 'opt2', 'opt3'],
          enumNames: ['Option One', 'Option Two', 'Option Three'],
        },
        untitledMulti: {
          type: 'array',
          description: 'Select multiple options',
          minItems: 1,
          maxItems: 3,
          items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
        },
        titledMulti: {
          type: 'array',
          description: 'Select multiple options with titles',
          minItems: 1,
          maxItems: 3,
          items: {
            anyOf: [
              { const: 'value1', title: 'First Choice' },
              { const: 'value2', title: 'Second Choice' },
              { const: 'value3', title: 'Third Choice' },
            ],
          },
        },
      },
      required: [],
    },
    done: (answer) => `Elicitation completed: ${elicited(answer)}`,
  }),
];
