/**
 * `resources/read` answered without an SDK server instance's dispatch, for the most common request
 * of all. The SDK builds a server, a transport, a context and a Response for every stateless
 * request (and, on a session or stdio connection, parses the request with its schemas, dispatches
 * it and validates the result); for a read that is most of its cost. The serving entries hand a
 * request here only once they know it qualifies — stateless.ts (2026-07-28 per-request HTTP),
 * session.ts (2025-era HTTP sessions) and stdio.ts (a 2025-era stdio connection), each starting
 * from the one test of a plain read (plain-read.ts) —
 * everything else goes to the SDK as before.
 *
 * The read itself is the same as the handler's (resources.ts): the request's principal, the policy
 * steps in their order, errors mapped once, and the result in the shape the SDK writes for the
 * request's era. 2026-07-28: `resultType`, the `resources/read` cache hint (ttlMs 0 unless the
 * provider says, cacheScope by who asks) and the server's identity in `_meta`; resource-not-found
 * is -32602. 2025 era: `{ contents }` alone, and not-found is -32002 (as withLegacyNotFoundCode
 * writes it). test/mcp/direct/parity.test.ts compares the two answers over every provider, era and entry;
 * `directReads: false` (server/index.ts) turns this path off.
 */
import {
  INVALID_PARAMS,
  SERVER_INFO_META_KEY,
  type AuthInfo,
  type JSONRPCMessage,
  type ProtocolEra,
  type RequestId,
} from '@modelcontextprotocol/server';
import type { Cancellation } from '../../core/cancellation.js';
import { LOCAL_PRINCIPAL } from '../../core/principal.js';
import { composePolicy } from '../../policy/index.js';
import type { EncodedLine } from './base64-run.js';
import { constantJson, encodeMessage } from './encode.js';
import { legacyErrorCode, RESOURCE_NOT_FOUND_LEGACY } from '../errors.js';
import { guardedAs, principalOfAuth, type Guard } from '../guarded-call.js';
import { resultIdentity } from '../identity.js';
import { contentBytes } from '../resources.js';
import { cacheScopeFor, serverIdentity, type McpServerOptions } from '../server.js';
import { definedProps } from '../../core/defined.js';

/**
 * Reads `uri` for the request `id` as the caller `authInfo` names, answering in the shape of `era`
 * (2026-07-28 when modern); resolves the encoded JSON-RPC answer (a result or an in-band error). Undefined, synchronously, for a URI this path does not
 * serve (a resource the MCP edge serves itself, or any read while operations are traced): the
 * caller then hands the request to the SDK.
 */
export type DirectRead = (
  id: RequestId,
  uri: string,
  authInfo: AuthInfo | undefined,
  cancel: Cancellation,
  era?: ProtocolEra,
) => Promise<EncodedLine> | undefined;

export function createDirectRead(
  options: Pick<
    McpServerOptions,
    'registry' | 'logger' | 'policy' | 'tracer' | 'appResources' | 'clientLog' | 'presentation'
  >,
): DirectRead {
  const { registry } = options;
  const guard: Guard = { policy: options.policy ?? composePolicy([]), logger: options.logger };
  // Traced operations continue the caller's trace context from `_meta` or headers: the SDK path.
  if (options.tracer !== undefined) return () => undefined;
  const appUris = new Set((options.appResources ?? []).map((resource) => resource.uri));
  // The same in every 2026-07-28 result: its JSON is made once (encode.ts).
  const serverMeta = constantJson({
    [SERVER_INFO_META_KEY]: resultIdentity(serverIdentity(options.presentation)),
  });
  const noCarrier = (): Record<string, string> => ({});
  // A direct read has no request stream to log to: its records go to no client (client-log.ts).
  const clientLog = options.clientLog;
  const quietly = <T>(work: () => T): T =>
    clientLog === undefined ? work() : clientLog.quietly(work);
  return (id, uri, authInfo, cancel, era = 'modern') => {
    if (appUris.has(uri)) return undefined;
    const principal = principalOfAuth(authInfo) ?? LOCAL_PRINCIPAL;
    const modern = era === 'modern';
    return quietly(() =>
      encodeAnswer(id, modern, () =>
        guardedAs(
          guard,
          { principal, signal: cancel, carrier: noCarrier },
          'resources/read',
          uri,
          async (call) => {
            const result = await registry.read(uri, call);
            call.bytes = contentBytes(result);
            if (!modern) return { contents: result.contents };
            const cacheScope = cacheScopeFor(registry.restricted, principal.kind);
            // Members in the SDK's order: a provider's own ttlMs stays where the handler put it, before
            // the resultType and cache hint the SDK adds after (resources.ts returns { contents, ttlMs }).
            if (result.ttlMs !== undefined)
              return {
                contents: result.contents,
                ttlMs: result.ttlMs,
                resultType: 'complete',
                cacheScope,
                _meta: serverMeta,
              };
            return {
              contents: result.contents,
              resultType: 'complete',
              ttlMs: 0,
              cacheScope,
              _meta: serverMeta,
            };
          },
        ),
      ),
    );
  };
}

/**
 * The encoded answer to request `id` of `work` run through guardedAs: its result, or the error it
 * threw as the SDK's dialect of the era writes it (`modern`: 2026-07-28). Shared with the direct
 * subscribe (subscribe.ts).
 */
export async function encodeAnswer(
  id: RequestId,
  modern: boolean,
  work: () => Promise<Record<string, unknown>>,
): Promise<EncodedLine> {
  let message: JSONRPCMessage;
  try {
    message = { result: await work(), jsonrpc: '2.0', id } as JSONRPCMessage;
  } catch (error) {
    // guardedAs maps every failure to the ProtocolError the SDK would write, in-band (HTTP 200).
    const {
      code,
      message: text,
      data,
    } = error as { code: number; message: string; data?: unknown };
    // As the SDK's dialects encode it: resource-not-found is -32602 on 2026-07-28, -32002 before.
    const wire = modern
      ? code === RESOURCE_NOT_FOUND_LEGACY
        ? INVALID_PARAMS
        : code
      : legacyErrorCode(code, data);
    message = {
      jsonrpc: '2.0',
      id,
      error: { code: wire, message: text, ...definedProps({ data }) },
    };
  }
  return encodeMessage(message);
}
