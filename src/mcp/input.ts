/**
 * Multi-round-trip input (core/input.ts) on the wire. A handler's `InputRequired` becomes the SDK's
 * input-required result, its state sealed with an HMAC codec; the SDK sends it to a 2026-07-28
 * client, or (its legacy shim) turns the requests into real server-to-client requests on a 2025-era
 * connection and calls the handler again. On every round the SDK verifies the echoed state with the
 * same codec before the handler runs, so `ctx.state()` only ever sees state this server minted.
 */
import { randomBytes } from 'node:crypto';
import {
  CLIENT_CAPABILITIES_META_KEY,
  createRequestStateCodec,
  inputRequired as sdkInputRequired,
  inputResponse as sdkInputResponse,
  type InputRequest as WireInputRequest,
  type InputRequiredResult,
  type RequestStateCodec,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import {
  MissingClientCapabilityError,
  missingCapabilities,
  type ClientCapabilities,
  type ElicitationSchema,
  type InputContext,
  type InputRequest,
  type InputRequired,
  type InputResponse,
} from '../core/input.js';
import { definedProps } from '../core/defined.js';

/** How `requestState` is sealed. */
export interface RequestStateOptions {
  /**
   * The HMAC key, at least 32 bytes. Every process that may receive a retry must share it (several
   * processes behind one load balancer). @default 32 random bytes per process
   */
  key?: string | Uint8Array;
  /** How long a minted state stays valid, seconds. @default 600 */
  ttlSeconds?: number;
}

export type StateCodec = RequestStateCodec<unknown>;

export function createStateCodec(options: RequestStateOptions = {}): StateCodec {
  return createRequestStateCodec<unknown>({
    key: options.key ?? randomBytes(32),
    ...definedProps({ ttlSeconds: options.ttlSeconds }),
  });
}

/** The InputContext of one request round. */
export function inputContext(server: Server, ctx: ServerContext): InputContext {
  return inputContextOf(server, ctx.mcpReq.envelope, ctx.mcpReq.inputResponses, <T>() =>
    ctx.mcpReq.requestState<T>(),
  );
}

/**
 * The InputContext of a round whose request carries `envelope` (2026-07-28), the answers to a
 * previous round and its verified state: a plain 2025-era request (mcp/direct-tools.ts) has none.
 */
export function inputContextOf(
  server: Server,
  envelope: unknown,
  responses: ServerContext['mcpReq']['inputResponses'],
  state: <T>() => T | undefined,
): InputContext {
  const declared = ((envelope as Record<string, unknown> | undefined)?.[
    CLIENT_CAPABILITIES_META_KEY
  ] ??
    server.getClientCapabilities() ??
    {}) as ClientCapabilities;
  const view = (key: string): InputResponse => sdkInputResponse(responses, key) as InputResponse;
  return {
    clientCapabilities: declared,
    requireCapabilities(required) {
      const missing = missingCapabilities(required, declared);
      if (missing !== undefined) throw new MissingClientCapabilityError(missing);
    },
    inputResponse: view,
    accepted<T>(key: string, schema?: z.ZodType<T>): T | undefined {
      const answer = view(key);
      if (answer.kind !== 'elicit' || answer.action !== 'accept' || answer.content === undefined)
        return undefined;
      if (schema === undefined) return answer.content as T;
      const parsed = schema.safeParse(answer.content);
      return parsed.success ? parsed.data : undefined;
    },
    state,
  };
}

/** The wire form of a handler's InputRequired, its state sealed. */
export async function toWireInputRequired(
  answer: InputRequired,
  codec: StateCodec,
  ctx: ServerContext,
): Promise<InputRequiredResult> {
  const inputRequests =
    answer.inputRequests === undefined
      ? undefined
      : Object.fromEntries(
          Object.entries(answer.inputRequests).map(([key, request]) => [
            key,
            toWireRequest(request),
          ]),
        );
  return sdkInputRequired({
    ...definedProps({
      inputRequests,
      requestState: answer.state === undefined ? undefined : await codec.mint(answer.state, ctx),
    }),
  });
}

function toWireRequest(request: InputRequest): WireInputRequest {
  switch (request.method) {
    case 'elicitation/create':
      return sdkInputRequired.elicit({
        message: request.params.message,
        requestedSchema: elicitationSchema(request.params.requestedSchema) as never,
      });
    case 'sampling/createMessage':
      return sdkInputRequired.createMessage(request.params as never);
    case 'roots/list':
      return sdkInputRequired.listRoots();
  }
}

/** A zod object becomes the restricted JSON Schema elicitation takes; a JSON Schema passes as is. */
function elicitationSchema(schema: ElicitationSchema | z.ZodType): ElicitationSchema {
  if (!(schema instanceof z.ZodType)) return schema;
  const {
    $schema: _schema,
    additionalProperties: _additional,
    ...rest
  } = z.toJSONSchema(schema, { io: 'input' }) as Record<string, unknown>;
  return rest as ElicitationSchema;
}
