/**
 * `resources/read` answered without an SDK server instance, for the HTTP endpoint's 2026-07-28
 * per-request path. The SDK builds a server, a transport, a context and a Response for every
 * stateless request, then validates and encodes the result; for the most common request of all
 * that is most of its cost. The endpoint hands a request here only once the SDK's own classifier
 * accepted its envelope and its headers match the body exactly (http/direct-read.ts); everything
 * else goes to the SDK as before.
 *
 * The read itself is the same as the handler's (resources.ts): the request's principal, the policy
 * steps in their order, errors mapped once, and the result in the shape the SDK writes for this
 * revision — `resultType`, the `resources/read` cache hint (ttlMs 0 unless the provider says,
 * cacheScope by who asks) and the server's identity in `_meta`. A test compares the two answers.
 */
import { INVALID_PARAMS, SERVER_INFO_META_KEY, type AuthInfo, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/server';
import { LOCAL_PRINCIPAL } from '../core/principal.js';
import { composePolicy } from '../policy/index.js';
import { encodeMessage } from './encode.js';
import { RESOURCE_NOT_FOUND_LEGACY } from './errors.js';
import { guardedAs, principalOfAuth, type Guard } from './guard.js';
import { SERVER_ICONS } from './icons.js';
import { contentBytes } from './resources.js';
import { cacheScopeFor, SERVER_NAME, SERVER_VERSION, type McpServerOptions } from './server.js';

/**
 * Reads `uri` for the request `id` as the caller `authInfo` names; resolves the encoded JSON-RPC
 * answer (a result or an in-band error). Undefined, synchronously, for a URI this path does not
 * serve (a resource the MCP edge serves itself, or any read while operations are traced): the
 * caller then hands the request to the SDK.
 */
export type DirectRead = (id: RequestId, uri: string, authInfo: AuthInfo | undefined, signal: AbortSignal) => Promise<string | Array<string | Buffer>> | undefined;

export function createDirectRead(options: Pick<McpServerOptions, 'registry' | 'logger' | 'policy' | 'tracer' | 'appResources'>): DirectRead {
  const { registry } = options;
  const guard: Guard = { policy: options.policy ?? composePolicy([]), logger: options.logger };
  // Traced operations continue the caller's trace context from `_meta` or headers: the SDK path.
  if (options.tracer !== undefined) return () => undefined;
  const appUris = new Set((options.appResources ?? []).map((resource) => resource.uri));
  const serverInfo = { name: SERVER_NAME, version: SERVER_VERSION, icons: SERVER_ICONS };
  const noCarrier = (): Record<string, string> => ({});
  return (id, uri, authInfo, signal) => {
    if (appUris.has(uri)) return undefined;
    const principal = principalOfAuth(authInfo) ?? LOCAL_PRINCIPAL;
    return answer(id, () =>
      guardedAs(guard, { principal, signal, carrier: noCarrier }, 'resources/read', uri, async (call) => {
        const result = await registry.read(uri, call);
        call.bytes = contentBytes(result);
        const cacheScope = cacheScopeFor(registry.restricted, principal.kind);
        return { contents: result.contents, resultType: 'complete', ttlMs: result.ttlMs ?? 0, cacheScope, _meta: { [SERVER_INFO_META_KEY]: serverInfo } };
      }),
    );
  };
}

async function answer(id: RequestId, read: () => Promise<Record<string, unknown>>): Promise<string | Array<string | Buffer>> {
  let message: JSONRPCMessage;
  try {
    message = { result: await read(), jsonrpc: '2.0', id } as JSONRPCMessage;
  } catch (error) {
    // guardedAs maps every failure to the ProtocolError the SDK would write, in-band (HTTP 200).
    const { code, message: text, data } = error as { code: number; message: string; data?: unknown };
    // As the SDK's 2026-07-28 dialect encodes it: resource-not-found is -32602 on this revision.
    const wire = code === RESOURCE_NOT_FOUND_LEGACY ? INVALID_PARAMS : code;
    message = { jsonrpc: '2.0', id, error: { code: wire, message: text, ...(data === undefined ? {} : { data }) } };
  }
  return encodeMessage(message);
}
