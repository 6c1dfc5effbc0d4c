// The 2026-07-28 multi-round-trip fixtures (`test_input_required_result_*`), a tool that needs a
// client capability, and the streaming probe. Each returns `inputRequired(...)` until the client has
// answered; state between rounds is sealed by the server and read back, verified, with `ctx.state()`.
import { z } from 'zod';
import { defineTool, inputRequired } from 'mcp-reservoir';

const none = z.object({});
const text = (value) => ({ content: [{ type: 'text', text: value }] });
const askName = (message = 'What is your name?') =>
  inputRequired.elicit(message, {
    type: 'object',
    properties: { name: { type: 'string' } },
    required: ['name'],
  });
const confirm = () =>
  inputRequired.elicit('Please confirm', {
    type: 'object',
    properties: { ok: { type: 'boolean' } },
    required: ['ok'],
  });
const sample = (prompt, maxTokens) =>
  inputRequired.createMessage({
    messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
    maxTokens,
  });
const samplingText = (answer) =>
  answer.kind === 'sampling' && answer.result.content?.type === 'text'
    ? answer.result.content.text
    : undefined;

export const mrtrTools = [
  defineTool({
    name: 'test_input_required_result_elicitation',
    description: 'MRTR: asks the user for their name, then greets them',
    input: none,
    call(_args, ctx) {
      const answer = ctx.accepted('user_name', z.object({ name: z.string() }));
      if (answer === undefined) return inputRequired({ inputRequests: { user_name: askName() } });
      return text(`Hello, ${answer.name}!`);
    },
  }),
  defineTool({
    name: 'test_input_required_result_sampling',
    description: 'MRTR: asks the client LLM a question',
    input: none,
    call(_args, ctx) {
      const answer = samplingText(ctx.inputResponse('capital_question'));
      if (answer === undefined)
        return inputRequired({
          inputRequests: { capital_question: sample('What is the capital of France?', 100) },
        });
      return text(`Sampling result: ${answer}`);
    },
  }),
  defineTool({
    name: 'test_input_required_result_list_roots',
    description: "MRTR: asks for the client's roots",
    input: none,
    call(_args, ctx) {
      const answer = ctx.inputResponse('client_roots');
      if (answer.kind !== 'roots')
        return inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } });
      return text(
        `Found ${answer.roots.length} root(s): ${answer.roots.map((r) => r.uri).join(', ')}`,
      );
    },
  }),
  defineTool({
    name: 'test_input_required_result_request_state',
    description: 'MRTR: asks for confirmation, carrying state between rounds',
    input: none,
    call(_args, ctx) {
      const state = ctx.state();
      const answer = ctx.accepted('confirm', z.object({ ok: z.boolean() }));
      if (state?.kind !== 'request-state' || answer === undefined) {
        return inputRequired({
          inputRequests: { confirm: confirm() },
          state: { kind: 'request-state' },
        });
      }
      return text(`state-ok: requestState validated (confirmed: ${answer.ok})`);
    },
  }),
  defineTool({
    name: 'test_input_required_result_multiple_inputs',
    description: 'MRTR: asks for a name, an LLM greeting and the roots at once',
    input: none,
    call(_args, ctx) {
      const name = ctx.accepted('user_name', z.object({ name: z.string() }));
      const greeting = samplingText(ctx.inputResponse('greeting'));
      const roots = ctx.inputResponse('client_roots');
      if (
        ctx.state()?.kind !== 'multiple-inputs' ||
        name === undefined ||
        greeting === undefined ||
        roots.kind !== 'roots'
      ) {
        return inputRequired({
          inputRequests: {
            user_name: askName(),
            greeting: sample('Generate a greeting', 50),
            client_roots: inputRequired.listRoots(),
          },
          state: { kind: 'multiple-inputs' },
        });
      }
      return text(`Name: ${name.name}; Greeting: ${greeting}; Roots: ${roots.roots.length}`);
    },
  }),
  defineTool({
    name: 'test_input_required_result_multi_round',
    description: 'MRTR: asks two questions, one round each',
    input: none,
    call(_args, ctx) {
      const state = ctx.state();
      if (state?.round === 1) {
        const step1 = ctx.accepted('step1', z.object({ name: z.string() }));
        if (step1 !== undefined) {
          const color = inputRequired.elicit('Step 2: What is your favorite color?', {
            type: 'object',
            properties: { color: { type: 'string' } },
            required: ['color'],
          });
          return inputRequired({
            inputRequests: { step2: color },
            state: { round: 2, name: step1.name },
          });
        }
      }
      if (state?.round === 2) {
        const step2 = ctx.accepted('step2', z.object({ color: z.string() }));
        if (step2 !== undefined)
          return text(`Multi-round complete for ${state.name} who likes ${step2.color}`);
      }
      return inputRequired({
        inputRequests: { step1: askName('Step 1: What is your name?') },
        state: { round: 1 },
      });
    },
  }),
  defineTool({
    name: 'test_input_required_result_tampered_state',
    description: 'MRTR: state integrity (a tampered requestState is refused)',
    input: none,
    call(_args, ctx) {
      if (ctx.state()?.kind === 'tamper-test' && ctx.accepted('confirm') !== undefined)
        return text('integrity-ok: state verified');
      return inputRequired({
        inputRequests: { confirm: confirm() },
        state: { kind: 'tamper-test' },
      });
    },
  }),
  defineTool({
    name: 'test_input_required_result_capabilities',
    description: 'MRTR: asks only for what the client declared it can do',
    input: none,
    call(_args, ctx) {
      const answered = ['elicit_input', 'sample_input'].filter(
        (key) => ctx.inputResponse(key).kind !== 'missing',
      );
      if (answered.length > 0) return text(`capabilities-ok: received ${answered.join(',')}`);
      const inputRequests = {};
      if (ctx.clientCapabilities.elicitation !== undefined) {
        inputRequests.elicit_input = inputRequired.elicit('Elicitation input', {
          type: 'object',
          properties: { value: { type: 'string' } },
          required: ['value'],
        });
      }
      if (ctx.clientCapabilities.sampling !== undefined)
        inputRequests.sample_input = sample('Sample request', 50);
      if (Object.keys(inputRequests).length === 0)
        return text('No supported capabilities declared');
      return inputRequired({ inputRequests, state: { kind: 'capabilities-test' } });
    },
  }),
  defineTool({
    name: 'test_missing_capability',
    description: 'Needs the sampling capability: refused with -32021 without it',
    input: none,
    call(_args, ctx) {
      ctx.requireCapabilities({ sampling: {} });
      const answer = samplingText(ctx.inputResponse('hello'));
      if (answer === undefined)
        return inputRequired({ inputRequests: { hello: sample('Say hello', 20) } });
      return text(`Success: ${answer}`);
    },
  }),
  defineTool({
    name: 'test_streaming_elicitation',
    description:
      'Reports progress, then asks the user to confirm (input arrives in-band, never as a request)',
    input: none,
    async call(_args, ctx) {
      const answer = ctx.inputResponse('confirm');
      if (answer.kind !== 'elicit') {
        await ctx.progress(50, 100, 'Waiting for confirmation');
        return inputRequired({ inputRequests: { confirm: confirm() } });
      }
      return text(`Streaming complete: ${answer.action}`);
    },
  }),
];
