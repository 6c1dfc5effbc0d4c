// The conformance suites' prompts, one of which needs the user's input before it can be rendered.
import { definePrompt, inputRequired } from 'mcp-reservoir';
import { PNG_1X1 } from './media.mjs';

const ARG1_VALUES = ['paris', 'park', 'party', 'test-value-1', 'test-value-2'];

export const prompts = [
  {
    name: 'test_simple_prompt',
    description: 'A simple prompt without arguments',
    messages: () => [
      { role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } },
    ],
  },
  {
    name: 'test_prompt_with_arguments',
    description: 'A prompt with two required arguments',
    arguments: [
      {
        name: 'arg1',
        description: 'First test argument',
        required: true,
        complete: (value) => ({ values: ARG1_VALUES.filter((v) => v.startsWith(value)) }),
      },
      { name: 'arg2', description: 'Second test argument', required: true },
    ],
    messages: ({ arg1, arg2 }) => [
      {
        role: 'user',
        content: { type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` },
      },
    ],
  },
  {
    name: 'test_prompt_with_embedded_resource',
    description: 'A prompt that embeds a resource',
    arguments: [
      { name: 'resourceUri', description: 'URI of the resource to embed', required: true },
    ],
    messages: ({ resourceUri }) => [
      {
        role: 'user',
        content: {
          type: 'resource',
          resource: {
            uri: resourceUri,
            mimeType: 'text/plain',
            text: 'Embedded resource content for testing.',
          },
        },
      },
      {
        role: 'user',
        content: { type: 'text', text: 'Please process the embedded resource above.' },
      },
    ],
  },
  {
    name: 'test_prompt_with_image',
    description: 'A prompt with an image',
    messages: () => [
      { role: 'user', content: { type: 'image', data: PNG_1X1, mimeType: 'image/png' } },
      { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
    ],
  },
  definePrompt({
    name: 'test_input_required_result_prompt',
    description: 'MRTR: asks the user what context to use, then renders',
    messages(_args, ctx) {
      const answer = ctx.accepted('user_context');
      if (typeof answer?.context !== 'string') {
        return inputRequired({
          inputRequests: {
            user_context: inputRequired.elicit('What context should the prompt use?', {
              type: 'object',
              properties: { context: { type: 'string' } },
              required: ['context'],
            }),
          },
        });
      }
      return [
        { role: 'user', content: { type: 'text', text: `Prompt with context: ${answer.context}` } },
      ];
    },
  }),
];
