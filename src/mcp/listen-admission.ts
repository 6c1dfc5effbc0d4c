/**
 * `subscriptions/listen` admission (2026-07-28). The SDK's serving entries acknowledge and route
 * listen streams, but they honour every requested URI verbatim and tell no one when a stream opens
 * or ends. So each listen request passes through here first: its resource URIs are checked and
 * their watches retained in a Channel (missing, refused or out-of-root URIs are dropped, so the
 * acknowledgement carries only the honoured subset, in canonical form), and the request goes on
 * to the SDK rewritten to that subset. The returned release function gives everything back when
 * the stream ends.
 */
import { isReservoirError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import type { Principal } from '../core/principal.js';
import { checkSubscriptionList, type Channel } from '../core/subscriptions.js';
import { toProtocolError } from './errors.js';

export const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';

export interface AdmittedListen {
  /** The request params to hand on, narrowed to what is honoured. */
  params: Record<string, unknown>;
  release: () => void;
}

/** Whether a message is a 2026-07-28 `subscriptions/listen` request. */
export function isModernListen(
  message: unknown,
): message is { id: string | number; method: string; params: Record<string, unknown> } {
  if (message === null || typeof message !== 'object') return false;
  const m = message as {
    method?: unknown;
    id?: unknown;
    params?: { _meta?: Record<string, unknown> };
  };
  return (
    m.method === 'subscriptions/listen' &&
    m.id !== undefined &&
    typeof m.params?._meta?.[PROTOCOL_VERSION_META_KEY] === 'string'
  );
}

/**
 * Retains what a listen request asks for. Throws a ReservoirError (limit_exceeded,
 * invalid_argument) when the request as a whole cannot be served; malformed filters are left for
 * the SDK to reject.
 */
export async function admitListen(
  channel: Channel,
  params: Record<string, unknown>,
  maxUris: number,
  logger: Logger,
  principal?: Principal,
): Promise<AdmittedListen> {
  const filter = params['notifications'];
  if (filter === null || typeof filter !== 'object' || Array.isArray(filter))
    return { params, release: () => undefined };
  const requested = filter as Record<string, unknown>;
  const held: string[] = [];
  let list = false;
  const release = (): void => {
    for (const uri of held.splice(0)) channel.remove(uri);
    if (list) channel.removeList();
    list = false;
  };
  try {
    const narrowed: Record<string, unknown> = { ...requested };
    if (requested['resourceSubscriptions'] !== undefined) {
      const uris = checkSubscriptionList(requested['resourceSubscriptions'], maxUris);
      const honoured: string[] = [];
      for (const uri of uris) {
        try {
          const href = await channel.add(uri, principal);
          held.push(href);
          if (!honoured.includes(href)) honoured.push(href);
        } catch (error) {
          if (isReservoirError(error) && error.code === 'limit_exceeded') throw error;
          logger.debug({ uri, err: error }, 'listen: not honouring a resource subscription');
        }
      }
      narrowed['resourceSubscriptions'] = honoured;
    }
    if (requested['resourcesListChanged'] === true) {
      await channel.addList();
      list = true;
    }
    return { params: { ...params, notifications: narrowed }, release };
  } catch (error) {
    release();
    throw error;
  }
}

/** The JSON-RPC error object for a listen refused as a whole. */
export function listenError(
  error: unknown,
  logger: Logger,
): { code: number; message: string; data?: unknown } {
  const mapped = toProtocolError(error, logger);
  return mapped.data === undefined
    ? { code: mapped.code, message: mapped.message }
    : { code: mapped.code, message: mapped.message, data: mapped.data };
}
