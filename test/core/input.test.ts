// The SDK-free half of multi-round-trip input: the inputRequired builder, capability checks, and
// the context a direct call (outside any request) gets.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  isInputRequired,
  inputRequired,
  missingCapabilities,
  MissingClientCapabilityError,
  noInput,
} from '../../src/core/input.js';
import { definePrompt, renderPrompt } from '../../src/core/prompts.js';
import { Registry } from '../../src/core/registry.js';

describe('inputRequired', () => {
  it('builds requests of every kind, keyed by the handler', () => {
    const answer = inputRequired({
      inputRequests: {
        name: inputRequired.elicit('Name?', z.object({ name: z.string() })),
        llm: inputRequired.createMessage({
          messages: [{ role: 'user', content: { type: 'text', text: 'Hi' } }],
          maxTokens: 10,
        }),
        roots: inputRequired.listRoots(),
      },
      state: { step: 1 },
    });
    expect(isInputRequired(answer)).toBe(true);
    expect(Object.keys(answer.inputRequests ?? {})).toEqual(['name', 'llm', 'roots']);
    expect(answer.inputRequests?.['roots']).toEqual({ method: 'roots/list' });
    expect(answer.state).toEqual({ step: 1 });
  });

  it('refuses an answer with neither requests nor state', () => {
    expect(() => inputRequired({})).toThrow(TypeError);
    expect(() => inputRequired({ inputRequests: {} })).toThrow(TypeError);
    expect(inputRequired({ state: 'resume' })).toEqual({
      resultType: 'input_required',
      state: 'resume',
    });
  });

  it('tells results from input-required answers', () => {
    expect(isInputRequired({ content: [] })).toBe(false);
    expect(isInputRequired(null)).toBe(false);
  });
});

describe('client capabilities', () => {
  it('names exactly the capabilities missing', () => {
    expect(
      missingCapabilities({ sampling: {}, elicitation: {} }, { elicitation: { form: {} } }),
    ).toEqual({ sampling: {} });
    expect(missingCapabilities({ sampling: {} }, { sampling: {} })).toBeUndefined();
  });

  it('is a ReservoirError with the spec data shape', () => {
    const error = new MissingClientCapabilityError({ sampling: {} });
    expect(error.code).toBe('missing_capability');
    expect(error.data).toEqual({ requiredCapabilities: { sampling: {} } });
  });

  it('outside a request: no capabilities and no answers', () => {
    const ctx = noInput();
    expect(() => ctx.requireCapabilities({ roots: {} })).toThrow(MissingClientCapabilityError);
    expect(ctx.inputResponse('x')).toEqual({ kind: 'missing' });
    expect(ctx.accepted('x')).toBeUndefined();
    expect(ctx.state()).toBeUndefined();
  });
});

describe('definePrompt', () => {
  const prompt = definePrompt({
    name: 'ask',
    description: 'Asks first',
    messages(_args, ctx) {
      const topic = ctx.accepted<{ topic: string }>('topic');
      if (topic === undefined)
        return inputRequired({
          inputRequests: {
            topic: inputRequired.elicit('Topic?', {
              type: 'object',
              properties: { topic: { type: 'string' } },
            }),
          },
        });
      return [{ role: 'user', content: { type: 'text', text: topic.topic } }];
    },
  });

  it('gives a direct call without input a complete context, and passes input-required answers through rendering', async () => {
    const signal = new AbortController().signal;
    expect(isInputRequired(await prompt.messages({}, { signal }))).toBe(true);
    expect(isInputRequired(await renderPrompt(prompt, {}, new Registry(), { signal }))).toBe(true);
  });

  it('renders once the answer is there', async () => {
    const ctx = {
      ...noInput(),
      signal: new AbortController().signal,
      accepted: <T>() => ({ topic: 'tides' }) as T,
    };
    expect(await renderPrompt(prompt, {}, new Registry(), ctx)).toEqual([
      { role: 'user', content: { type: 'text', text: 'tides' } },
    ]);
  });
});
