/**
 * Input from the client during a request: multi-round-trip requests (MRTR, protocol 2026-07-28).
 *
 * A tool or prompt that needs something from the client — a user's answer (elicitation), an LLM
 * completion (sampling) or the client's roots — returns `inputRequired(...)` instead of a result.
 * On 2026-07-28 the client fulfils the requests and retries the call with the answers; on a
 * 2025-era connection the server itself sends the matching `elicitation/create`,
 * `sampling/createMessage` or `roots/list` requests and calls the handler again with the answers.
 * Either way the handler reads them with `ctx.inputResponse(key)` / `ctx.accepted(key)`, so one
 * handler serves both protocol eras.
 *
 * State a handler needs between rounds goes in `inputRequired({ state })`: the server seals it
 * (HMAC, see `ReservoirOptions.requestState`) and `ctx.state()` returns it, verified, on the retry.
 * A tampered or expired state never reaches the handler: the request fails with -32602.
 *
 * Nothing here knows the MCP SDK; `mcp/input.ts` translates these shapes onto the wire.
 */
import type { z } from 'zod';
import { ReservoirError } from './errors.js';
import { definedProps } from './defined.js';

/**
 * Client capabilities as declared by the client (at `initialize` in the 2025 era, on every request
 * in 2026-07-28). Only the keys matter to capability checks; each value is an object.
 */
export interface ClientCapabilities {
  elicitation?: {
    form?: Record<string, unknown>;
    url?: Record<string, unknown>;
    [key: string]: unknown;
  };
  sampling?: {
    context?: Record<string, unknown>;
    tools?: Record<string, unknown>;
    [key: string]: unknown;
  };
  roots?: { listChanged?: boolean; [key: string]: unknown };
  [key: string]: Record<string, unknown> | undefined;
}

/** A restricted JSON Schema for a form elicitation: a flat object of primitive (or enum) fields. */
export interface ElicitationSchema {
  type: 'object';
  properties: Record<string, Record<string, unknown>>;
  required?: string[];
  [key: string]: unknown;
}

/** A message for sampling: text, image or audio content from the user or the assistant. */
export interface SamplingMessage {
  role: 'user' | 'assistant';
  content:
    | { type: 'text'; text: string }
    | { type: 'image'; data: string; mimeType: string }
    | { type: 'audio'; data: string; mimeType: string };
}

/** What a handler asks the client for: an elicitation, a sampling (LLM) request, or its roots. */
export type InputRequest =
  | {
      method: 'elicitation/create';
      params: { message: string; requestedSchema: ElicitationSchema | z.ZodType };
    }
  | {
      method: 'sampling/createMessage';
      params: {
        messages: SamplingMessage[];
        maxTokens: number;
        systemPrompt?: string;
        temperature?: number;
        stopSequences?: string[];
        modelPreferences?: Record<string, unknown>;
        [key: string]: unknown;
      };
    }
  | { method: 'roots/list'; params?: Record<string, never> };

/** A handler's answer that more input is needed before it can complete. Build it with `inputRequired()`. */
export interface InputRequired {
  readonly resultType: 'input_required';
  /** The requests for the client, by a key of the handler's choosing (read the answers by that key). */
  readonly inputRequests?: Readonly<Record<string, InputRequest>>;
  /**
   * JSON-serialisable state handed back, verified, by `ctx.state()` on the next round. It is signed,
   * not encrypted: the client can read it, so never put secrets in it.
   */
  readonly state?: unknown;
}

/** The client's answer to one input request, as `ctx.inputResponse(key)` shows it. */
export type InputResponse =
  | { kind: 'missing' }
  | { kind: 'elicit'; action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> }
  | {
      kind: 'sampling';
      result: { role: 'user' | 'assistant'; content: unknown; model: string; stopReason?: string };
    }
  | { kind: 'roots'; roots: { uri: string; name?: string }[] };

/**
 * What every handler that may need client input can read: the client's capabilities, its answers
 * to the previous round's input requests, and the previous round's verified state.
 */
export interface InputContext {
  /** The capabilities the client declared; `{}` when it declared none. */
  readonly clientCapabilities: ClientCapabilities;
  /**
   * Throws `MissingClientCapabilityError` (sent as -32021, HTTP 400) unless the client declared
   * every capability named in `required`, e.g. `{ sampling: {} }`.
   */
  requireCapabilities(required: ClientCapabilities): void;
  /** The client's answer to the input request sent under `key` in the previous round. */
  inputResponse(key: string): InputResponse;
  /**
   * The content of an accepted elicitation answered under `key`, validated by `schema` when one is
   * given; `undefined` when missing, declined, cancelled, of another kind or invalid.
   */
  accepted<T = Record<string, unknown>>(key: string, schema?: z.ZodType<T>): T | undefined;
  /** The state the previous round returned with `inputRequired({ state })`, verified; else `undefined`. */
  state<T = unknown>(): T | undefined;
}

interface InputRequiredBuilder {
  /**
   * Answers "more input needed": the client fulfils `inputRequests` and calls again. At least one
   * of `inputRequests` (non-empty) or `state` must be given.
   *
   * @example
   * ```ts
   * const name = ctx.accepted<{ name: string }>('name');
   * if (name === undefined) {
   *   return inputRequired({
   *     inputRequests: { name: inputRequired.elicit('What is your name?', { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] }) },
   *   });
   * }
   * return { content: [{ type: 'text', text: `Hello, ${name.name}!` }] };
   * ```
   */
  (spec: { inputRequests?: Record<string, InputRequest>; state?: unknown }): InputRequired;
  /** A form elicitation: `requestedSchema` is a restricted JSON Schema or a zod object. */
  elicit(message: string, requestedSchema: ElicitationSchema | z.ZodType): InputRequest;
  /** A sampling (LLM) request. */
  createMessage(
    params: Extract<InputRequest, { method: 'sampling/createMessage' }>['params'],
  ): InputRequest;
  /** A request for the client's roots. */
  listRoots(): InputRequest;
}

/** Builds `InputRequired` answers and the input requests inside them. */
export const inputRequired: InputRequiredBuilder = Object.assign(
  (spec: { inputRequests?: Record<string, InputRequest>; state?: unknown }): InputRequired => {
    const hasRequests =
      spec.inputRequests !== undefined && Object.keys(spec.inputRequests).length > 0;
    if (!hasRequests && spec.state === undefined)
      throw new TypeError('inputRequired() needs inputRequests or state');
    return {
      resultType: 'input_required',
      ...definedProps({
        inputRequests: hasRequests ? spec.inputRequests : undefined,
        state: spec.state,
      }),
    };
  },
  {
    elicit: (message: string, requestedSchema: ElicitationSchema | z.ZodType): InputRequest => ({
      method: 'elicitation/create',
      params: { message, requestedSchema },
    }),
    createMessage: (
      params: Extract<InputRequest, { method: 'sampling/createMessage' }>['params'],
    ): InputRequest => ({
      method: 'sampling/createMessage',
      params,
    }),
    listRoots: (): InputRequest => ({ method: 'roots/list' }),
  },
);

/** Whether a handler's answer is `InputRequired` rather than a result. */
export function isInputRequired(value: unknown): value is InputRequired {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { resultType?: unknown }).resultType === 'input_required'
  );
}

/**
 * The client did not declare a capability the request needs. Sent as
 * MissingRequiredClientCapability (-32021; HTTP 400), `data.requiredCapabilities` listing what is missing.
 */
export class MissingClientCapabilityError extends ReservoirError {
  constructor(readonly requiredCapabilities: ClientCapabilities) {
    super(
      'missing_capability',
      `The client must declare the ${Object.keys(requiredCapabilities).join(', ')} capability to use this`,
      {
        data: { requiredCapabilities },
      },
    );
    this.name = 'MissingClientCapabilityError';
  }
}

/** The capabilities of `required` that `declared` lacks, or undefined when none is missing. */
export function missingCapabilities(
  required: ClientCapabilities,
  declared: ClientCapabilities,
): ClientCapabilities | undefined {
  const missing: ClientCapabilities = {};
  for (const [name, value] of Object.entries(required)) {
    if (value !== undefined && declared[name] === undefined) missing[name] = value;
  }
  return Object.keys(missing).length === 0 ? undefined : missing;
}

/** An InputContext for calls made outside any request (tests, direct calls): no capabilities, no answers. */
export function noInput(): InputContext {
  return {
    clientCapabilities: {},
    requireCapabilities(required) {
      const missing = missingCapabilities(required, {});
      if (missing !== undefined) throw new MissingClientCapabilityError(missing);
    },
    inputResponse: () => ({ kind: 'missing' }),
    accepted: () => undefined,
    state: () => undefined,
  };
}
